"""Which releases could have written a store, from what the store holds.

Each piece of evidence narrows the set of known releases: a V2 magic code, an
IPv6 or inner-batch SYSFLAG bit, the ``__CRC32#`` property, the trailing
separator of the properties string, non-zero checkpoint fields, the files and
folders present, the column families of the v1 RocksDB config databases (from
their OPTIONS files), and the keys of the config JSON files (present keys, and keys
every release in their range writes but that are missing). The ranges come from
the annotations in ``formats/`` (:mod:`.annotations`), never from this module.

The result is the releases left, as ranges of consecutive known releases (the
evidence can leave a gap: a trailing separator allows 4.0.0 to 4.9.0 and 5.2.0
on), their oldest and newest, and the evidence. ``max`` is ``None`` when the
newest known release is left (nothing bounds it from above). Elements the
producer client writes (``-rmq-writer: client``: the compression-type bits) are
evidence about the client and never bound the broker; they are reported apart.
A store written by several releases one after the other (upgraded in place) can
hold evidence that no single release explains; then the evidence that bounds
from above is set aside and said so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..columnar.summary import SUMMARY_COLUMNS, int_values, record_versions, string_buffers, truth
from . import annotations as ann
from . import releases as rel
from .releases import Release

_CL = "rocketmq_commitlog"
_CRC32_KEY = "__CRC32#"
_CRC_BYTES = (_CRC32_KEY + "\x01").encode()
#: The end of a properties string where the ``__CRC32#`` property is looked for (the broker appends it last).
_CRC_TAIL_CHARS = 24
#: Most JSON map values looked at per map, to bound the time on large config files.
_MAX_MAP_VALUES = 64


@dataclass(frozen=True)
class Evidence:
    """One observation and the releases it allows: ``since <= release < until`` (or outside it)."""

    observation: str
    since: Release | None
    until: Release | None
    citation: str | None
    location: str
    outside: bool = False
    about: str = "broker"

    def allows(self, r: Release) -> bool:
        """True when a broker of release ``r`` could have written what was observed."""
        if self.about != "broker":
            return True  # the client's release, which says nothing about the broker's
        inside = (self.since is None or r >= self.since) and (self.until is None or r < self.until)
        return inside != self.outside

    @property
    def releases(self) -> str:
        """The releases allowed, as text: ``>= 4.6.0``, ``< 5.0.0``, ``>= 4.9.1 and < 5.2.0``, ..."""
        lo, hi = (f">= {self.since}" if self.since else ""), (f"< {self.until}" if self.until else "")
        if not self.outside:
            return " and ".join(p for p in (lo, hi) if p)
        if self.until is None:
            return f"< {self.since}"
        if self.since is None or self.since == rel.oldest():
            return f">= {self.until}"
        return f"< {self.since} or >= {self.until}"

    def to_json(self) -> dict[str, Any]:
        out = {"observation": self.observation, "releases": self.releases,
               "min": None if self.outside or not self.since else self.since.version,
               "before": None if self.outside or not self.until else self.until.version,
               "citation": self.citation, "spec": self.location}
        if self.about != "broker":
            out["about"] = self.about
        return out


def _span(lo: Release, hi: Release) -> str:
    if hi == rel.newest():
        return f"{lo} or later"
    return str(lo) if lo == hi else f"{lo}\u2013{hi}"


@dataclass(frozen=True)
class WrittenBy:
    """The releases that could have written a store."""

    min: Release | None
    max: Release | None
    evidence: tuple[Evidence, ...]
    set_aside: tuple[Evidence, ...] = ()
    #: The releases allowed, as ``(first, last)`` runs of consecutive known releases, oldest first.
    ranges: tuple[tuple[Release, Release], ...] = ()
    #: Evidence about the producer client that wrote the messages, not about the broker.
    client: tuple[Evidence, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "min": self.min.version if self.min else None, "max": self.max.version if self.max else None,
            "ranges": [{"min": lo.version, "max": None if hi == rel.newest() else hi.version}
                       for lo, hi in self.ranges],
            "summary": self.summary(),
            "evidence": [e.to_json() for e in self.evidence]}
        if self.set_aside:
            out["setAside"] = [e.to_json() for e in self.set_aside]
        if self.client:
            out["client"] = [e.to_json() for e in self.client]
        return out

    def summary(self) -> str:
        """The allowed releases exactly, gaps included: ``4.6.0\u20134.9.0 or 5.2.0 or later``."""
        if self.min is None:
            return "unknown"
        ranges = self.ranges or ((self.min, self.max or rel.newest()),)
        return " or ".join(_span(lo, hi) for lo, hi in ranges)


#: :attr:`RecordFacts.first` keys past the SYSFLAG bits' (which are their places in ``Detector._FLAG_BITS``).
_V2_RANK = 4
_CRC_RANK = 5


class RecordFacts:
    """What :meth:`Detector.batch` looks for in commit-log messages, kept as plain values that add up.

    Fed record batches' columns in commit-log order (:meth:`add`), and the
    facts of the messages after them (:meth:`merge`: another part of the
    same walk, in a worker process, say); :meth:`Detector.take` turns them
    into evidence. ``first`` maps each kind (a SYSFLAG bit's place in
    ``Detector._FLAG_BITS``, :data:`_V2_RANK`, :data:`_CRC_RANK`) to the
    commit-log offset of the first message showing it; ``trailing`` counts the
    properties strings with and without a trailing U+0002, ``first_trailing``
    the offset of the first of each.
    """

    def __init__(self) -> None:
        self.first: dict[int, int] = {}
        self.trailing = [0, 0]
        self.first_trailing: list[int | None] = [None, None]

    def add(self, *, offsets: np.ndarray, versions: np.ndarray, sys_flags: np.ndarray, properties: pa.Array) -> None:
        """Take one batch's messages (one value of each per message, as :meth:`Detector.batch`)."""
        n = len(offsets)
        if not n:
            return
        first = self.first
        flag = int(np.bitwise_or.reduce(sys_flags))
        for rank, (bit, _, _) in enumerate(Detector._FLAG_BITS):
            if flag & bit and rank not in first:
                first[rank] = int(offsets[int(np.argmax((sys_flags & bit) != 0))])
        if _V2_RANK not in first:
            v2 = np.flatnonzero(versions == 2)
            if len(v2):
                first[_V2_RANK] = int(offsets[int(v2[0])])
        starts, data = string_buffers(properties)
        if _CRC_RANK not in first and _may_hold(data, _CRC_BYTES):
            # Only then each string's last 24 characters, as :meth:`Detector.message` looks at them.
            tails = pc.utf8_slice_codeunits(properties, start=-_CRC_TAIL_CHARS)
            hit = np.flatnonzero(truth(pc.match_substring(tails, _CRC32_KEY + "\x01")))
            if len(hit):
                first[_CRC_RANK] = int(offsets[int(hit[0])])
        filled = np.diff(starts) > 0
        if filled.any():
            # A non-empty string ends with U+0002 exactly when its last byte is 0x02 (UTF-8 keeps ASCII whole).
            trailing = filled & (data[np.maximum(starts[1:] - 1, 0)] == 2)
            for i, kind in enumerate((trailing, filled & ~trailing)):
                count = int(np.count_nonzero(kind))
                if count:
                    self.trailing[i] += count
                    if self.first_trailing[i] is None:
                        self.first_trailing[i] = int(offsets[int(np.argmax(kind))])

    def merge(self, later: "RecordFacts") -> None:
        """Take the facts of the messages after those taken so far."""
        for rank, offset in later.first.items():
            self.first.setdefault(rank, offset)
        for i in (0, 1):
            self.trailing[i] += later.trailing[i]
            if self.first_trailing[i] is None:
                self.first_trailing[i] = later.first_trailing[i]


class Detector:
    """Collects evidence; feed it messages with :meth:`message` and the store with :meth:`store`."""

    def __init__(self) -> None:
        self._facts = ann.load()
        self._seen: dict[str, Evidence] = {}
        self._trailing = [0, 0]  # messages with / without a trailing separator
        self._first_trailing: list[str | None] = [None, None]
        self._flags_left = 0x7F0
        self._v2_seen = False
        self._crc_seen = False

    # -- evidence helpers ---------------------------------------------------------------

    def _add(self, key: str, ev: Evidence) -> None:
        self._seen.setdefault(key, ev)

    def _element(self, fmt: str, path: str, observation: str) -> None:
        e = self._facts.element(fmt, path)
        self._add(f"{fmt}:{path}", Evidence(observation, e.since, e.until, e.ref, e.location, about=e.writer))

    def _change(self, fmt: str, path: str, rule: str, release: str, observation: str) -> None:
        """Evidence that the writer has the change ``rule`` made at ``release`` (so is that or newer)."""
        for c in self._facts.changes_at(fmt, path):
            if c.rule == rule and c.release.version == release:
                self._add(f"{fmt}:{path}:{rule}:{release}", Evidence(observation, c.release, None, c.ref, c.location))
                return
        raise KeyError(f"no {rule} at {release} in {fmt}:{path}")

    # -- commit log ---------------------------------------------------------------------

    #: SYSFLAG bits and the spec element each one is evidence of.
    _FLAG_BITS = (
        (0x10, "types/sys_flag/seq/is_born_host_v6", "IPv6 born host (SYSFLAG bit 4)"),
        (0x20, "types/sys_flag/seq/is_store_host_v6", "IPv6 store host (SYSFLAG bit 5)"),
        (0x700, "types/sys_flag/seq/compression_type",
         "compression type in SYSFLAG bits 8-10 (set by the producer client)"),
        (0x80, "types/sys_flag/seq/is_inner_batch", "inner-batch record (SYSFLAG bit 7)"),
    )

    def message(self, msg: Any) -> None:
        """Evidence from one commit-log message (a :class:`rmqformats.message.Message`)."""
        # Called for every message of a scan: the common case (nothing new) does a few integer
        # tests and looks only at the end of the properties string.
        flag = msg.sys_flag & self._flags_left
        if flag:
            for bit, path, what in self._FLAG_BITS:
                if flag & bit:
                    self._element(_CL, path, f"{what} at commit-log offset {msg.commitlog_offset}")
                    self._flags_left &= ~bit
        if msg.version == 2 and not self._v2_seen:
            self._v2_seen = True
            self._element(_CL, "enums/magic_code/0xdaa320ab",
                          f"V2 record (magic 0xdaa320ab) at commit-log offset {msg.commitlog_offset}")
        props = msg.properties_raw
        if props:
            if not self._crc_seen and _CRC32_KEY + "\x01" in props[-_CRC_TAIL_CHARS:]:
                self._crc_seen = True
                self._change(_CL, "types/message/seq/properties", "PROPERTY_ADDED", "5.2.0",
                             f"`__CRC32#` property at commit-log offset {msg.commitlog_offset}")
            i = 0 if props[-1] == "\x02" else 1
            self._trailing[i] += 1
            if self._first_trailing[i] is None:
                self._first_trailing[i] = f"commit-log offset {msg.commitlog_offset}"

    def messages(self, msgs: Iterable[Any]) -> None:
        for m in msgs:
            self.message(m)

    def batch(self, *, offsets: np.ndarray, versions: np.ndarray, sys_flags: np.ndarray,
              properties: pa.Array) -> None:
        """Evidence from a batch of commit-log messages, as columns: what :meth:`message` finds in each.

        ``offsets``, ``versions`` (1 or 2) and ``sys_flags`` hold one value
        per message, ``properties`` the properties strings; the batches come
        in commit-log order. The evidence, and the order it is found in,
        is that of :meth:`message` called on each message: for each kind,
        the first message that shows it.
        """
        facts = RecordFacts()
        facts.add(offsets=offsets, versions=versions, sys_flags=sys_flags, properties=properties)
        self.take(facts)

    def take(self, facts: "RecordFacts") -> None:
        """Evidence from :class:`RecordFacts` of the messages after those already seen (commit-log order):
        the same evidence, in the same order, as :meth:`batch` called on their batches one after another."""
        found = []
        for rank, offset in facts.first.items():
            if rank < len(self._FLAG_BITS):
                bit, path, what = self._FLAG_BITS[rank]
                if self._flags_left & bit:
                    self._flags_left &= ~bit
                    found.append((offset, rank, lambda at, p=path, w=what:
                                  self._element(_CL, p, f"{w} at commit-log offset {at}")))
            elif rank == _V2_RANK and not self._v2_seen:
                self._v2_seen = True
                found.append((offset, rank, lambda at: self._element(
                    _CL, "enums/magic_code/0xdaa320ab", f"V2 record (magic 0xdaa320ab) at commit-log offset {at}")))
            elif rank == _CRC_RANK and not self._crc_seen:
                self._crc_seen = True
                found.append((offset, rank, lambda at: self._change(
                    _CL, "types/message/seq/properties", "PROPERTY_ADDED", "5.2.0",
                    f"`__CRC32#` property at commit-log offset {at}")))
        for offset, _, add in sorted(found, key=lambda f: f[:2]):
            add(offset)
        for i in (0, 1):
            self._trailing[i] += facts.trailing[i]
            if self._first_trailing[i] is None and facts.first_trailing[i] is not None:
                self._first_trailing[i] = f"commit-log offset {facts.first_trailing[i]}"

    # -- files, checkpoint, config --------------------------------------------------------

    def store(self, root: str) -> None:
        """Evidence from the files and folders of the store root ``root``, its checkpoint and config."""
        for kind in self._facts.files:
            if not kind.path or not kind.evidence:
                continue
            path = os.path.join(root, kind.path.rstrip("/"))
            exists = os.path.isdir(path) if kind.path.endswith("/") else os.path.isfile(path)
            if exists and (kind.since not in (None, rel.oldest()) or kind.until is not None):
                loc = f"formats/{kind.spec}.ksy" if kind.spec else f"formats/releases.yaml:files/{kind.id}"
                self._add(f"file:{kind.id}", Evidence(f"{kind.path} exists", kind.since, kind.until, kind.ref, loc))
        abort = os.path.join(root, "abort")
        try:
            if os.path.isfile(abort) and 0 < os.path.getsize(abort) <= 64:
                with open(abort, "rb") as f:
                    if f.read().strip().isdigit():
                        self._change("abort", "files/abort", "MEANING_CHANGED", "5.0.0",
                                     "the abort file holds a process id")
        except OSError:
            pass
        self._config_column_families(root)
        self._checkpoint(os.path.join(root, "checkpoint"))
        self._index(os.path.join(root, "index"))
        self._config(root)

    #: Column families a 5.3.1+ broker adds to every v1 RocksDB config database.
    _CF_5_3_1 = ('[CFOptions "kvDataVersion"]', '[CFOptions "forbidden"]')

    def _config_column_families(self, root: str) -> None:
        """A v1 RocksDB config database with the 5.3.1 column families (read from its OPTIONS file, no lock)."""
        for kind in self._facts.files:
            changes = self._facts.changes_at(kind.id, f"files/{kind.id}")
            if not any(c.id == "config_rocksdb_column_families" for c in changes):
                continue
            folder = os.path.join(root, (kind.path or "").rstrip("/"))
            try:
                options = sorted((n for n in os.listdir(folder) if n.startswith("OPTIONS-")),
                                 key=lambda n: int(n[8:]) if n[8:].isdigit() else -1)
                if not options:
                    continue
                with open(os.path.join(folder, options[-1]), "rb") as f:
                    text = f.read(1 << 20).decode("utf-8", errors="replace")
            except OSError:
                continue
            if all(cf in text for cf in self._CF_5_3_1):
                self._change(kind.id, f"files/{kind.id}", "MEANING_CHANGED", "5.3.1",
                             f"{kind.path} has the kvDataVersion and forbidden column families ({options[-1]})")

    def _index(self, folder: str) -> None:
        """4.7.1+ count used slots in ``hashSlotCount``, older brokers every entry: fewer slots is evidence."""
        from ..errors import RmqFormatError
        from ..index import IndexFiles

        if not os.path.isdir(folder):
            return
        try:
            with IndexFiles(folder) as index:
                self._index_files(index.files)
        except (RmqFormatError, OSError):
            return

    def _index_files(self, files: Iterable[Any]) -> None:
        for f in files:
            h = f.header
            if 0 <= h.hash_slot_count < h.num_entries:
                self._change("rocketmq_index_file", "types/index_header/seq/num_hash_slots_used", "MEANING_CHANGED",
                             "4.7.1", f"index file {os.path.basename(f.path)}: {h.hash_slot_count} slots used "
                                      f"for {h.num_entries} entries")
                return

    def _checkpoint(self, path: str) -> None:
        try:
            with open(path, "rb") as f:
                head = f.read(40)
        except OSError:
            return
        if len(head) >= 32 and any(head[24:32]):
            self._element("rocketmq_checkpoint", "seq/ofs_master_flushed", "checkpoint masterFlushedOffset is set")
        if len(head) >= 40 and any(head[32:40]):
            self._element("rocketmq_checkpoint", "seq/ofs_confirm_phy", "checkpoint confirmPhyOffset is set")

    def _config(self, root: str) -> None:
        from ..config import fastjson

        for name in sorted(_schema_names()):
            schema = ann.load_schema(name)
            folder = schema.get("x-folder", "config")
            for file_name in schema.get("x-files") or []:
                path = os.path.join(root, folder, file_name)
                try:
                    if not os.path.isfile(path) or os.path.getsize(path) > 64 << 20:
                        continue
                    with open(path, "rb") as f:
                        text = f.read().decode("utf-8", errors="replace")
                    value = fastjson.parse(text, positions=False).value
                except (OSError, ValueError):
                    continue
                floor = ann._release(schema.get("x-since"), name) or rel.oldest()
                self._walk(name, schema, schema, value, "", f"{folder}/{file_name}", floor)

    def _resolve(self, name: str, schema: dict, node: dict) -> tuple[str, dict, dict]:
        """Follow ``$ref`` (same file or another schema in formats/config)."""
        for _ in range(8):
            ref = node.get("$ref")
            if not ref:
                break
            file_part, _, pointer = ref.partition("#")
            if file_part and file_part != name:
                name, schema = file_part, ann.load_schema(file_part)
            target: Any = schema
            for part in [p for p in pointer.split("/") if p]:
                target = target[part]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return name, schema, node

    def _walk(self, name: str, schema: dict, node: dict, value: Any, path: str, file_path: str,
              floor: Release) -> None:
        """Evidence from the keys of ``value`` that are newer than ``floor`` (the file's or parent's release)."""
        name, schema, node = self._resolve(name, schema, node)
        if isinstance(value, dict):
            props = node.get("properties") or {}
            for key, sub in props.items():
                if not isinstance(sub, dict):
                    continue
                since = ann._release(sub.get("x-since"), name)
                until = ann.json_until(sub.get("x-until"), name)
                interesting = (since is not None and since > floor) or until is not None
                source = f"formats/config/{name}:{path}/properties/{key}"
                if key in value:
                    if interesting:
                        self._add(f"json:{name}:{path}/{key}",
                                  Evidence(f"key {key} in {file_path}", since, until, sub.get("x-ref"), source))
                    self._walk(name, schema, sub, value[key], f"{path}/properties/{key}", file_path,
                               max(floor, since) if since else floor)
                elif sub.get("x-always-written") and interesting:
                    self._add(f"json-missing:{name}:{path}/{key}",
                              Evidence(f"no key {key} in {file_path}", since, until, sub.get("x-ref"), source,
                                       outside=True))
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                for i, (k, v) in enumerate(value.items()):
                    if i >= _MAX_MAP_VALUES:
                        break
                    if k not in props:
                        self._walk(name, schema, extra, v, f"{path}/additionalProperties", file_path, floor)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for v in value[:_MAX_MAP_VALUES]:
                self._walk(name, schema, node["items"], v, f"{path}/items", file_path, floor)

    # -- result ---------------------------------------------------------------------------

    def _all_evidence(self) -> list[Evidence]:
        out = list(self._seen.values())
        with_sep, without_sep = self._trailing
        if bool(with_sep) == bool(without_sep):
            return out  # no properties, or both kinds (written by several releases)
        dropped, restored = (next(c for c in self._facts.changes_at(_CL, "types/message/seq/properties")
                                  if c.id == name)
                             for name in ("trailing_separator_dropped", "trailing_separator_restored"))
        cite = f"{dropped.ref}; {restored.ref}"
        if with_sep:
            out.append(Evidence(f"{with_sep} properties strings end with U+0002 (first at {self._first_trailing[0]})",
                                dropped.release, restored.release, cite, dropped.location, outside=True))
        else:
            out.append(Evidence(f"{without_sep} properties strings end without U+0002 "
                                f"(first at {self._first_trailing[1]})", dropped.release, restored.release,
                                cite, dropped.location))
        return out

    def result(self) -> WrittenBy:
        """The releases every piece of evidence allows (see the module doc for mixed stores)."""
        every = self._all_evidence()
        client = tuple(e for e in every if e.about != "broker")
        evidence = [e for e in every if e.about == "broker"]
        allowed = [r for r in rel.RELEASES if all(e.allows(r) for e in evidence)]
        set_aside: list[Evidence] = []
        if not allowed:
            # Several writers: keep the lower bounds (what some release wrote), drop the rest.
            keep = [e for e in evidence if not e.outside and e.until is None]
            set_aside = [e for e in evidence if e not in keep]
            evidence = keep
            allowed = [r for r in rel.RELEASES if all(e.allows(r) for e in evidence)]
        if not allowed:
            return WrittenBy(None, None, tuple(evidence), tuple(set_aside), client=client)
        lo, hi = allowed[0], allowed[-1]
        useful = [e for e in evidence if not all(e.allows(r) for r in rel.RELEASES)]
        return WrittenBy(lo, None if hi == rel.newest() else hi, tuple(useful), tuple(set_aside),
                         _runs(allowed), client)


def _may_hold(data: np.ndarray, text: bytes) -> bool:
    """Whether ``data`` may hold ``text`` (its last two bytes side by side): a cheap test before the exact one."""
    at = np.flatnonzero(data[:-1] == text[-2])  # one pass; the byte is rare in properties
    return bool(len(at)) and bool(np.any(data[at + 1] == text[-1]))


def _runs(allowed: list[Release]) -> tuple[tuple[Release, Release], ...]:
    """``allowed`` (in release order) as runs of consecutive known releases."""
    index = {r: i for i, r in enumerate(rel.RELEASES)}
    runs: list[list[Release]] = []
    for r in allowed:
        if runs and index[r] == index[runs[-1][1]] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    return tuple((lo, hi) for lo, hi in runs)


def _schema_names() -> list[str]:
    return [name for name, _ in ann._schema_files()]


def detect(store: Any, *, messages: bool = True) -> WrittenBy:
    """The releases that could have written ``store`` (a :class:`rmqformats.store.Store`).

    Reads every commit-log message once (the columnar walk, a record batch at a time) unless ``messages``
    is false.
    """
    d = Detector()
    if messages:
        log = store.commitlog
        for batch in log.batches(columns=SUMMARY_COLUMNS, decompress=False):
            d.batch(offsets=int_values(batch.column("commitLogOffset")), versions=record_versions(batch, log.segments),
                    sys_flags=int_values(batch.column("sysFlag")), properties=batch.column("propertiesString"))
    if store.root:
        d.store(store.root)
    return d.result()

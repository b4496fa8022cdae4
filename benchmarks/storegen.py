"""Realistic broker stores for the benchmarks: ~1 GiB commit logs and their consume queues.

Every byte layout comes from the spec. ``rmqformats.synth`` (the construct
schemas generated from ``formats/``) encodes a pool of distinct records; the
log is that pool repeated in random order, with the fields that differ from
message to message rewritten in place: commit-log offset, queue id and queue
offset, born and store timestamps, the counter part of UNIQ_KEY, a sequence
number in the body, and the body CRC. The positions of those fields are
computed from ``generated/layouts/rocketmq_commitlog.py`` (the field order
and widths of the ``.ksy`` types), never written down here, and a sample of
the finished records is parsed back through the construct schema.
Encoding every record through construct costs ~50 µs, about four minutes
for the 3.9 million records of the small-body log; the pool and the
vectorised rewrite take seconds.

Consume queues are numpy arrays of the dtype ``rmqformats.units`` builds from
the consume-queue layout, checked against the construct schema, written in
300,000-unit files as the broker does.
"""

from __future__ import annotations

import argparse
import functools
import ipaddress
import json
import os
import random
import shutil
import struct
import sys
import time
import zlib
from dataclasses import asdict, dataclass

import numpy as np

from rmqformats import synth
from rmqformats.generated.construct import rocketmq_commitlog as cs
from rmqformats.generated.layouts import rocketmq_commitlog as layout
from rmqformats.generated.layouts import rocketmq_consumequeue as cq_layout
from rmqformats.javahash import tags_code
from rmqformats.properties import parse_properties
from rmqformats.units import unit_dtype

#: Bump when the generated mix changes, so old data is not reused.
DATA_FORMAT = 3
MIB = 1 << 20
#: Units per consume-queue file (``mappedFileSizeConsumeQueue`` = 6,000,000 bytes).
CQ_FILE_UNITS = 300_000
CQ_DTYPE = unit_dtype(cq_layout.UNIT_RUNS, cq_layout.UNIT_SEQ)
T0 = 1_795_200_000_000  # 2026-11-21, milliseconds
#: The slow reference parser decodes the records that start in this many MiB of the first segment.
SLICE_MIB = 32


# -- what the logs hold ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Topic:
    """A topic of the generated logs and how producers use it."""

    name: str
    queues: int
    #: Relative share of messages.
    weight: float
    tags: tuple[str, ...]
    #: Properties the producer or the broker add besides UNIQ_KEY, WAIT, TAGS and KEYS.
    kind: str = "plain"


# A V2 record needs a topic longer than 127 UTF-16 units (5.1+ autoMessageVersionOnTopicLen).
LONG_TOPIC = "tenant-eu-west-1%" + "-".join(f"analytics-pipeline-stage{i:02d}" for i in range(6))
assert len(LONG_TOPIC) > synth.V1_MAX_TOPIC

TOPICS = (
    Topic("UserActivityLog", 2, 40, ("login", "view", "click", "search"), "plain"),
    Topic("OrderEvents", 8, 30, ("created", "paid", "shipped", "cancelled"), "traced"),
    Topic("PaymentNotify", 4, 10, ("success", "failure"), "transaction"),
    Topic("InventorySync", 4, 8, ("reserve", "release"), "fifo"),
    Topic("%RETRY%order-service", 1, 2, ("created", "paid"), "retry"),
    Topic(LONG_TOPIC, 1, 0.2, ("batch",), "plain"),
)

# (address, port, relative share): producer connections as the broker saw them; two are IPv6.
CLIENTS = tuple((f"10.0.{i // 4}.{10 + i}", 40000 + 17 * i, 1.0) for i in range(8)) + (
    ("2001:db8:10::21", 52011, 0.2), ("fd00:a:b:c::7", 52040, 0.15))
STORE_HOSTS = (("10.0.8.5", 10911, 0.97), ("fd00:8::5", 10911, 0.03))
# (synth compression name, share of messages): a few percent, all four ways bodies get compressed.
COMPRESSIONS = (("zlib-legacy", 0.015), ("zlib", 0.01), ("lz4", 0.0075), ("zstd", 0.0075))
TRAILING_SEPARATOR_SHARE = 0.3  # 4.0-4.9.0 and 5.2+ writers end the properties with U+0002


@dataclass(frozen=True)
class LogShape:
    """The parameters of one generated commit log."""

    name: str
    body_min: int
    body_max: int
    #: Distinct records encoded through construct; the log repeats them in random order.
    pool: int


SHAPES = {
    "mixed": LogShape("mixed", 100, 4096, 10_000),
    "small": LogShape("small", 10, 200, 20_000),
}

#: Width of the record counter written into UNIQ_KEY (its time and counter hex digits).
UNIQ_TAIL = 12
#: The body of an uncompressed message starts with this and a decimal counter of SEQ_DIGITS digits.
SEQ_PREFIX = b'{"seq":'
SEQ_DIGITS = 10


# -- offsets of the fields, from the layout tables --------------------------------------------------

@dataclass(frozen=True)
class Field:
    """Where a field sits in a record and how it is packed (``fmt`` is empty for byte strings)."""

    offset: int
    size: int
    fmt: str = ""


def _codes(fmt: str) -> list[str]:
    """The struct codes of a run format (``">iqi"`` → ``['i', 'q', 'i']``)."""
    return [c for c in fmt[1:] if not c.isdigit()]


def _walk(seq: tuple[str, ...], runs: tuple, pos: int, out: dict[str, Field], special) -> int:
    """Place the fields of ``seq`` from ``pos``: runs of fixed integers, others through ``special``."""
    run_at = {names[0]: (names, fmt) for names, fmt in runs}
    i = 0
    while i < len(seq):
        name = seq[i]
        if name in run_at:
            names, fmt = run_at[name]
            for field_name, code in zip(names, _codes(fmt)):
                size = struct.calcsize(fmt[0] + code)
                out[field_name] = Field(pos, size, fmt[0] + code)
                pos += size
            i += len(names)
        else:
            pos = special(name, pos)
            i += 1
    return pos


@functools.lru_cache(maxsize=None)
def record_fields(v2: bool, born_v6: bool, store_v6: bool, len_body: int = 0, len_topic: int = 0) -> dict[str, Field]:
    """Offsets of every field of a message record, from the layout tables of the spec.

    ``len_body`` and ``len_topic`` are the sizes of the variable fields before
    the properties; fields before the body do not depend on them. Host
    fields are named ``<host>.address`` and ``<host>.port``. Do not modify
    the dict returned: it is cached.
    """
    lengths = {"body": len_body, "topic": len_topic}
    out: dict[str, Field] = {}
    host_v6 = {"born_host": born_v6, "store_host": store_v6}

    def host_part(prefix: str):
        def place(name: str, pos: int) -> int:
            if name != "address":
                raise ValueError(f"host field {name!r} is not in the layout tables")
            size = (layout.HOST_V6_VALUES if host_v6[prefix] else layout.HOST_V4_VALUES)["len_address"]({})
            out[f"{prefix}.address"] = Field(pos, size)
            return pos + size
        return place

    def message_part(name: str, pos: int) -> int:
        if name in host_v6:
            sub: dict[str, Field] = {}
            seq, runs = ((layout.HOST_V6_SEQ, layout.HOST_V6_RUNS) if host_v6[name]
                         else (layout.HOST_V4_SEQ, layout.HOST_V4_RUNS))
            end = _walk(seq, runs, pos, sub, host_part(name))
            out.update({k if "." in k else f"{name}.{k}": v for k, v in sub.items()})
            return end
        if name == "len_topic":
            fmt = layout.MESSAGE_LEN_TOPIC_CASES["magic_code::message_v2" if v2 else "_"]
            out[name] = Field(pos, struct.calcsize(fmt), fmt)
            return pos + struct.calcsize(fmt)
        if f"len_{name}" in out:  # a byte string whose length field came before it
            out[name] = Field(pos, lengths.get(name, 0))
            return pos + lengths.get(name, 0)
        raise ValueError(f"message field {name!r} is not in the layout tables")

    def record_part(name: str, pos: int) -> int:
        if name != "body":
            raise ValueError(f"record field {name!r} is not in the layout tables")
        return _walk(layout.MESSAGE_SEQ, layout.MESSAGE_RUNS, pos, out, message_part)

    _walk(layout.RECORD_SEQ, layout.RECORD_RUNS, 0, out, record_part)
    return out


def host_combo(born_v6: bool, store_v6: bool) -> int:
    """Index 0-3 of a combination of host widths."""
    return int(born_v6) | int(store_v6) << 1


#: Fixed fields before the body for each host combination (V1 and V2 agree there).
FIXED_FIELDS = [record_fields(False, bool(k & 1), bool(k & 2)) for k in range(4)]
SYS_FLAG_OFFSET = FIXED_FIELDS[0]["sys_flag"].offset
_BORN_V6 = layout.SYS_FLAG_BITS["is_born_host_v6"][0]
_STORE_V6 = layout.SYS_FLAG_BITS["is_store_host_v6"][0]


# -- the pool of distinct records ------------------------------------------------------------------

def text_pool(rng: random.Random, size: int = 1 << 19) -> bytes:
    """JSON lines of made-up events; bodies are slices of it, so they compress like real ones."""
    lines = []
    total = 0
    while total < size:
        line = json.dumps({
            "orderId": f"ORD{rng.randrange(10**9):09d}", "userId": rng.randrange(10**6),
            "amount": round(rng.uniform(1, 5000), 2), "currency": rng.choice(("CNY", "USD", "EUR")),
            "items": [{"sku": f"SKU-{rng.randrange(10**5):05d}", "qty": rng.randrange(1, 5)}
                      for _ in range(rng.randrange(1, 4))],
            "status": rng.choice(("NEW", "PAID", "SHIPPED", "DONE")), "ts": T0 + total,
        }, separators=(",", ":"))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def _weighted(rng: random.Random, items: tuple) -> tuple:
    return rng.choices(items, [it[-1] for it in items])[0]


def _hex(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(4 * digits):0{digits}X}"


def uniq_key_head(address: str, rng: random.Random) -> str:
    """UNIQ_KEY up to its time and counter digits: client IP, pid, class-loader hash (``MessageClientIDSetter``)."""
    ip = ipaddress.ip_address(address).packed.hex().upper()  # 16 bytes for an IPv6 client: 56 digits in all
    return ip + _hex(rng, 4) + _hex(rng, 8)


def message_properties(topic: Topic, rng: random.Random, uniq_head: str) -> dict[str, str]:
    """Properties as the producer (and for retries, the broker) set them, UNIQ_KEY's tail zeroed."""
    props: dict[str, str] = {}
    if topic.kind == "retry":
        props.update({"RETRY_TOPIC": "OrderEvents", "ORIGIN_MESSAGE_ID": _hex(rng, 32),
                      "REAL_TOPIC": topic.name, "REAL_QID": "0", "DELAY": str(rng.randrange(3, 6)),
                      "CONSUME_START_TIME": str(T0 + rng.randrange(10**7))})
    if rng.random() < 0.92:
        props["TAGS"] = rng.choice(topic.tags)
    if topic.kind != "plain" or rng.random() < 0.5:
        keys = [f"ORD{rng.randrange(10**9):09d}"] + ([f"U{rng.randrange(10**6)}"] if rng.random() < 0.5 else [])
        props["KEYS"] = " ".join(keys)
    props["UNIQ_KEY"] = uniq_head + "0" * UNIQ_TAIL
    props["WAIT"] = "true"
    if topic.kind == "transaction":
        props.update({"TRAN_MSG": "true", "PGROUP": "payment-producer-group",
                      "__transactionId__": props["UNIQ_KEY"]})
    if topic.kind == "fifo":
        props["__SHARDINGKEY"] = f"sku-{rng.randrange(5000)}"
    if topic.kind == "traced" and rng.random() < 0.3:
        props.update({"TRACE_ON": "true", "MSG_REGION": "DefaultRegion"})
    if rng.random() < 0.2:
        props["traceId"] = _hex(rng, 32).lower()
    return props


def message_body(rng: random.Random, text: bytes, size: int, counted: bool) -> tuple[bytes, int]:
    """A body of ``size`` bytes and the position of its counter digits (-1 without one)."""
    start = rng.randrange(len(text) - size)
    if counted and size >= len(SEQ_PREFIX) + SEQ_DIGITS + 1:
        head = SEQ_PREFIX + b"0" * SEQ_DIGITS + b","
        return (head + text[start:start + size - len(head)]), len(SEQ_PREFIX)
    return text[start:start + size], -1


POOL_COLUMNS = ("length", "topic", "combo", "uniq_pos", "seq_pos", "body_pos", "body_len",
                "decoded_len", "properties", "tags_code", "compressed", "v2")


def build_pool(shape: LogShape, seed: int) -> tuple[list[bytes], dict[str, np.ndarray]]:
    """Encode ``shape.pool`` distinct records through ``synth``; returns them and per-record facts."""
    rng = random.Random(seed)
    text = text_pool(rng)
    topics = [t for t in TOPICS]
    weights = [t.weight for t in topics]
    records: list[bytes] = []
    facts = {name: [] for name in POOL_COLUMNS}
    for _ in range(shape.pool):
        ti = rng.choices(range(len(topics)), weights)[0]
        topic = topics[ti]
        born = _weighted(rng, CLIENTS)
        store = _weighted(rng, STORE_HOSTS)
        compression = None
        roll = rng.random()
        for name, share in COMPRESSIONS:
            if roll < share:
                compression = name
                break
            roll -= share
        size = rng.randint(shape.body_min, shape.body_max)
        body, seq_at = message_body(rng, text, size, counted=compression is None)
        props = message_properties(topic, rng, uniq_key_head(born[0], rng))
        sys_flag = 0
        prepared = 0
        if topic.kind == "transaction":  # a committed half message: the commit record points at it
            sys_flag |= layout.TRANSACTION_TYPE["commit"] << layout.SYS_FLAG_BITS["transaction_type"][1]
            prepared = rng.randrange(1 << 30)
        spec = synth.MessageSpec(
            topic=topic.name, body=body, properties=props, born_host=born[:2], store_host=store[:2],
            reconsume_times=rng.randrange(1, 4) if topic.kind == "retry" else 0, sys_flag=sys_flag,
            prepared_transaction_offset=prepared, compression=compression,
            trailing_separator=rng.random() < TRAILING_SEPARATOR_SHARE)
        data = synth.encode_message(spec, 0)
        records.append(data)
        _add_facts(facts, data, ti, body, seq_at, props, compression is not None)
    return records, {k: np.asarray(v, dtype=np.int64) for k, v in facts.items()}


def _add_facts(facts: dict, data: bytes, topic_index: int, body: bytes, seq_at: int,
               props: dict[str, str], compressed: bool) -> None:
    """Record where a pool record's per-message fields are, read back through the layout offsets."""
    sys_flag = struct.unpack_from(">I", data, SYS_FLAG_OFFSET)[0]
    born_v6, store_v6 = bool(sys_flag & _BORN_V6), bool(sys_flag & _STORE_V6)
    magic = struct.unpack_from(FIXED_FIELDS[0]["magic"].fmt, data, FIXED_FIELDS[0]["magic"].offset)[0]
    v2 = magic == layout.MAGIC_CODE["message_v2"]
    fixed = record_fields(v2, born_v6, store_v6)
    (len_body,) = struct.unpack_from(fixed["len_body"].fmt, data, fixed["len_body"].offset)
    len_topic_at = fixed["body"].offset + len_body
    len_topic_fmt = layout.MESSAGE_LEN_TOPIC_CASES["magic_code::message_v2" if v2 else "_"]
    (len_topic,) = struct.unpack_from(len_topic_fmt, data, len_topic_at)
    fields = record_fields(v2, born_v6, store_v6, len_body, len_topic)
    (len_props,) = struct.unpack_from(fields["len_properties"].fmt, data, fields["len_properties"].offset)
    props_at = fields["properties"].offset
    text = data[props_at:props_at + len_props]
    uniq = text.index(b"UNIQ_KEY\x01" + props["UNIQ_KEY"].encode()) + len(b"UNIQ_KEY\x01") + \
        len(props["UNIQ_KEY"]) - UNIQ_TAIL
    assert props_at + len_props == len(data), "the layout offsets disagree with the encoded record"
    facts["length"].append(len(data))
    facts["topic"].append(topic_index)
    facts["combo"].append(host_combo(born_v6, store_v6))
    facts["uniq_pos"].append(props_at + uniq)
    facts["seq_pos"].append(fields["body"].offset + seq_at if seq_at >= 0 else -1)
    facts["body_pos"].append(fields["body"].offset)
    facts["body_len"].append(len_body)
    facts["decoded_len"].append(len(body))
    facts["properties"].append(len(parse_properties(text.decode())))
    facts["tags_code"].append(tags_code(props.get("TAGS")))
    facts["compressed"].append(int(compressed))
    facts["v2"].append(int(v2))


# -- the log: choosing, placing and rewriting records ----------------------------------------------

def choose_records(pool: dict[str, np.ndarray], target: int, rng: np.random.Generator) -> np.ndarray:
    """Pool indices of the log's records, in order, until their bytes reach ``target``."""
    mean = pool["length"].mean()
    picks = rng.integers(0, len(pool["length"]), int(target / mean * 1.05) + 1000)
    ends = np.cumsum(pool["length"][picks])
    while ends[-1] < target:
        more = rng.integers(0, len(pool["length"]), len(picks) // 10 + 1000)
        picks = np.concatenate([picks, more])
        ends = np.cumsum(pool["length"][picks])
    return picks[: int(np.searchsorted(ends, target)) + 1]


def place_records(lengths: np.ndarray, segment_size: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """Commit-log offsets of the records and the BLANK records ``(offset, length)``.

    As the broker does (``CommitLog.DefaultAppendMessageCallback``), a record
    that would not leave 8 bytes free in its segment goes to the next one,
    after a BLANK record covering the rest of the segment.
    """
    ends = np.cumsum(lengths)
    offsets = np.empty(len(lengths), np.int64)
    blanks = []
    first, segment_start = 0, 0
    while first < len(lengths):
        base = ends[first - 1] if first else 0
        last = int(np.searchsorted(ends, base + segment_size - 8, side="right"))
        if last == first:
            raise ValueError(f"a {lengths[first]}-byte record does not fit a {segment_size}-byte segment")
        offsets[first:last] = segment_start + np.concatenate(([0], ends[first:last - 1] - base))
        if last < len(lengths):
            used = int(ends[last - 1] - base)
            blanks.append((segment_start + used, segment_size - used))
            segment_start += segment_size
        first = last
    return offsets, blanks


def queue_offsets(keys: np.ndarray) -> np.ndarray:
    """Per record, how many earlier records share its key (its offset in its consume queue)."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    rank = np.arange(len(keys)) - np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    out = np.empty(len(keys), np.int64)
    out[order] = rank
    return out


@dataclass
class Messages:
    """The per-message values of a generated log, in commit-log order."""

    pick: np.ndarray
    offset: np.ndarray
    queue_id: np.ndarray
    queue_offset: np.ndarray
    born: np.ndarray
    store: np.ndarray
    uniq_tail: np.ndarray


def message_values(pool: dict[str, np.ndarray], pick: np.ndarray, offsets: np.ndarray,
                   rng: np.random.Generator, span_hours: float | None = None, queue_factor: int = 1) -> Messages:
    """Queue ids and offsets, timestamps ~1 ms apart (or spread over ``span_hours``) and UNIQ_KEY tails.

    Each topic has ``queue_factor`` times its queues (a broker with many queues)."""
    n = len(pick)
    queues = np.array([t.queues * queue_factor for t in TOPICS])[pool["topic"][pick]]
    queue_id = (rng.random(n) * queues).astype(np.int64)
    qoff = queue_offsets(pool["topic"][pick] * (1 << 20) + queue_id)
    step = 1 if span_hours is None else max(1, int(span_hours * 3_600_000 / max(n, 1)))
    born = T0 + np.cumsum(rng.integers(0, 2 * step + 1, n))
    store = born + rng.integers(1, 5, n)
    # UNIQ_KEY ends with 4 bytes of time since the client started and a 2-byte counter.
    uniq_tail = ((born - T0 + 86_400_000) & 0xFFFFFFFF) << 16 | (np.arange(n) & 0xFFFF)
    return Messages(pick, offsets, queue_id, qoff, born, store, uniq_tail)


_NUMPY_INTS = {"b": "i1", "B": "u1", "h": "i2", "H": "u2", "i": "i4", "I": "u4", "q": "i8", "Q": "u8"}


def _put_ints(buf: np.ndarray, positions: np.ndarray, values: np.ndarray, fmt: str) -> None:
    """Write ``values`` packed as the struct format ``fmt`` (one integer) at ``positions`` of ``buf``."""
    size = struct.calcsize(fmt)
    dtype = np.dtype(fmt[0] + _NUMPY_INTS[fmt[-1]])
    packed = values.astype(dtype).view(np.uint8).reshape(-1, size)
    buf[positions[:, None] + np.arange(size)] = packed


def _put_digits(buf: np.ndarray, positions: np.ndarray, values: np.ndarray, digits: int, base: int) -> None:
    """Write ``values`` as fixed-width upper-case digits in ``base`` at ``positions``."""
    alphabet = np.frombuffer(b"0123456789ABCDEF", np.uint8)
    powers = base ** np.arange(digits - 1, -1, -1, dtype=np.int64)
    buf[positions[:, None] + np.arange(digits)] = alphabet[(values[:, None] // powers) % base]


def patch_records(buf: np.ndarray, rel: np.ndarray, sel: slice, pool: dict[str, np.ndarray],
                  msgs: Messages) -> None:
    """Rewrite the per-message fields of the records ``sel`` whose records start at ``rel`` in ``buf``."""
    pick = msgs.pick[sel]
    combo = pool["combo"][pick]
    values = {"ofs_physical": msgs.offset[sel], "queue_id": msgs.queue_id[sel],
              "queue_offset": msgs.queue_offset[sel], "born_timestamp": msgs.born[sel],
              "store_timestamp": msgs.store[sel]}
    for name, value in values.items():
        offsets = np.array([FIXED_FIELDS[k][name].offset for k in range(4)])[combo]
        formats = {FIXED_FIELDS[k][name].fmt for k in range(4)}
        assert len(formats) == 1
        _put_ints(buf, rel + offsets, value, formats.pop())
    _put_digits(buf, rel + pool["uniq_pos"][pick], msgs.uniq_tail[sel], UNIQ_TAIL, 16)
    counted = np.flatnonzero(pool["seq_pos"][pick] >= 0)
    seq = np.arange(sel.start, sel.stop)[counted] % 10 ** SEQ_DIGITS
    _put_digits(buf, rel[counted] + pool["seq_pos"][pick[counted]], seq, SEQ_DIGITS, 10)
    patch_body_crcs(buf, rel[counted], pick[counted], pool)


def patch_body_crcs(buf: np.ndarray, rel: np.ndarray, pick: np.ndarray, pool: dict[str, np.ndarray]) -> None:
    """Recompute BODYCRC (``UtilAll.crc32``) of the records whose bodies were rewritten."""
    view = memoryview(buf)
    starts = (rel + pool["body_pos"][pick]).tolist()
    ends = (rel + pool["body_pos"][pick] + pool["body_len"][pick]).tolist()
    crcs = np.fromiter((zlib.crc32(view[s:e]) for s, e in zip(starts, ends)), np.int64, len(starts)) & 0x7FFFFFFF
    field = FIXED_FIELDS[0]["body_crc"]
    _put_ints(buf, rel + field.offset, crcs, field.fmt)


def write_segments(folder: str, records: list[bytes], pool: dict[str, np.ndarray], msgs: Messages,
                   blanks: list[tuple[int, int]], segment_size: int) -> list[str]:
    """Write the log as segment files, zero-filling the last one like a pre-allocated mapped file."""
    os.makedirs(folder, exist_ok=True)
    paths = []
    n = len(msgs.pick)
    first = 0
    for seg_no in range(len(blanks) + 1):
        seg_start = seg_no * segment_size
        last = int(np.searchsorted(msgs.offset, seg_start + segment_size))
        data = bytearray(b"".join([records[i] for i in msgs.pick[first:last].tolist()]))
        buf = np.frombuffer(data, np.uint8)
        patch_records(buf, msgs.offset[first:last] - seg_start, slice(first, last), pool, msgs)
        path = os.path.join(folder, f"{seg_start:020d}")
        with open(path, "wb") as f:
            f.write(data)
            if seg_no < len(blanks):
                f.write(synth.encode_blank(blanks[seg_no][1]))
            f.truncate(segment_size)
        paths.append(path)
        first = last
    assert first == n
    return paths


def check_records(paths: list[str], msgs: Messages, pool: dict[str, np.ndarray], blanks: list[tuple[int, int]],
                  segment_size: int, rng: np.random.Generator, sample: int = 3000) -> int:
    """Parse a sample of the written records with the construct schema and compare every rewritten field."""
    n = len(msgs.pick)
    chosen = np.unique(np.r_[0, n - 1, rng.integers(0, n, sample),
                             np.flatnonzero(pool["v2"][msgs.pick])[:50],
                             np.flatnonzero(pool["combo"][msgs.pick])[:200]])
    files = [open(p, "rb") for p in paths]
    try:
        for i in chosen.tolist():
            offset = int(msgs.offset[i])
            f = files[offset // segment_size]
            f.seek(offset % segment_size)
            rec = cs.record.parse(f.read(int(pool["length"][msgs.pick[i]])))
            m = rec.body
            got = (m.ofs_physical, m.queue_id, m.queue_offset, m.born_timestamp, m.store_timestamp)
            want = (offset, msgs.queue_id[i], msgs.queue_offset[i], msgs.born[i], msgs.store[i])
            if got != tuple(int(v) for v in want) or m.body_crc != zlib.crc32(m.body) & 0x7FFFFFFF \
                    or rec.len_record != rec.body.len_record_computed:
                raise AssertionError(f"record {i} at {offset} does not read back: {got} != {want}")
            if not parse_properties(m.properties)["UNIQ_KEY"].endswith(f"{int(msgs.uniq_tail[i]):012X}"):
                raise AssertionError(f"record {i}: UNIQ_KEY tail not rewritten")
        for seg_no, (offset, length) in enumerate(blanks):
            files[seg_no].seek(offset % segment_size)
            rec = cs.record.parse(files[seg_no].read(8))
            assert rec.magic == "blank" and rec.len_record == length, (offset, rec)
    finally:
        for f in files:
            f.close()
    return len(chosen)


# -- consume queues --------------------------------------------------------------------------------

def write_consume_queues(root: str, pool: dict[str, np.ndarray], msgs: Messages,
                         queue_factor: int = 1) -> list[dict]:
    """Write ``consumequeue/<topic>/<queueId>/`` for every queue of the log; returns what was written."""
    check_cq_dtype()
    topic_of = pool["topic"][msgs.pick]
    sizes = pool["length"][msgs.pick]
    tags = pool["tags_code"][msgs.pick]
    # The rows of each queue, in commit-log order (one stable sort, not a scan of the log per queue).
    key = topic_of.astype(np.int64) * (1 << 20) + msgs.queue_id
    order = np.argsort(key, kind="stable")
    keys, starts = np.unique(key[order], return_index=True)
    rows_of = dict(zip(keys.tolist(), np.split(order, starts[1:])))
    queues = []
    for ti, topic in enumerate(TOPICS):
        for qid in range(topic.queues * queue_factor):
            sel = rows_of.get(ti * (1 << 20) + qid, np.zeros(0, np.int64))
            assert np.array_equal(msgs.queue_offset[sel], np.arange(len(sel)))
            units = np.zeros(len(sel), CQ_DTYPE)
            ofs, size, code = cq_layout.UNIT_SEQ
            units[ofs], units[size], units[code] = msgs.offset[sel], sizes[sel], tags[sel]
            folder = os.path.join(root, "consumequeue", topic.name, str(qid))
            files = write_unit_files(folder, units.tobytes(), CQ_FILE_UNITS * CQ_DTYPE.itemsize)
            queues.append({"topic": topic.name, "queue_id": qid, "units": len(sel), "files": files,
                           "offset_sum": int(msgs.offset[sel].sum()), "size_sum": int(sizes[sel].sum())})
    return queues


def write_unit_files(folder: str, data: bytes, file_size: int) -> int:
    """Cut a queue's unit stream into files named by stream position, zero-filled to full size."""
    os.makedirs(folder, exist_ok=True)
    count = max(1, -(-len(data) // file_size))
    for k in range(count):
        with open(os.path.join(folder, f"{k * file_size:020d}"), "wb") as f:
            f.write(data[k * file_size:(k + 1) * file_size])
            f.truncate(file_size)
    return count


def check_cq_dtype() -> None:
    """The numpy unit type must give the bytes the construct schema builds."""
    units = [(123_456_789_012, 321, -5), (0, 0x7FFFFFFF, 0), (1 << 40, 1, tags_code("paid"))]
    array = np.array(units, CQ_DTYPE)
    assert array.tobytes() == synth.encode_cq_units(units), "consume-queue dtype disagrees with the spec"


# -- the whole store -------------------------------------------------------------------------------

def checksum(pool: dict[str, np.ndarray], msgs: Messages, upto: int | None = None) -> dict[str, int]:
    """What the decoders must report: messages, sum of offsets, decoded body bytes, properties."""
    sel = slice(None) if upto is None else slice(0, int(np.searchsorted(msgs.offset, upto)))
    pick = msgs.pick[sel]
    return {"messages": len(pick), "offsets": int(msgs.offset[sel].sum()),
            "body_bytes": int(pool["decoded_len"][pick].sum()), "properties": int(pool["properties"][pick].sum())}


def data_params(shape: str, mib: int, segment_mib: int, seed: int, span_hours: float | None = None,
                queue_factor: int = 1) -> dict:
    """The parameters that decide the generated bytes; data is reused only when they match.

    ``span_hours`` spreads the store times over that many hours (default: ~1 ms apart); ``queue_factor``
    gives each topic that many times its queues (default: 20 queues in all).
    """
    params = {"format": DATA_FORMAT, **asdict(SHAPES[shape]), "mib": mib, "segment_mib": segment_mib,
              "seed": seed, "cq_file_units": CQ_FILE_UNITS, "slice_mib": min(SLICE_MIB, segment_mib)}
    if span_hours is not None:
        params["span_hours"] = span_hours
    if queue_factor != 1:
        params["queue_factor"] = queue_factor
    return params


def generate(folder: str, params: dict) -> dict:
    """Build the store under ``folder``/store and return its manifest (written last, as JSON)."""
    shutil.rmtree(folder, ignore_errors=True)
    root = os.path.join(folder, "store")
    shape = SHAPES[params["name"]]
    segment_size = params["segment_mib"] * MIB
    t0 = time.perf_counter()
    records, pool = build_pool(shape, params["seed"])
    pool_seconds = time.perf_counter() - t0
    rng = np.random.default_rng(params["seed"])
    pick = choose_records(pool, params["mib"] * MIB, rng)
    offsets, blanks = place_records(pool["length"][pick], segment_size)
    factor = params.get("queue_factor", 1)
    msgs = message_values(pool, pick, offsets, rng, params.get("span_hours"), factor)
    paths = write_segments(os.path.join(root, "commitlog"), records, pool, msgs, blanks, segment_size)
    checked = check_records(paths, msgs, pool, blanks, segment_size, rng)
    queues = write_consume_queues(root, pool, msgs, factor)
    seconds = time.perf_counter() - t0
    manifest = describe(params, pool, msgs, blanks, paths, queues)
    manifest.update({"generation_seconds": round(seconds, 1), "pool_seconds": round(pool_seconds, 1),
                     "records_checked": checked})
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    return manifest


def describe(params: dict, pool: dict[str, np.ndarray], msgs: Messages, blanks: list, paths: list[str],
             queues: list[dict]) -> dict:
    """The manifest: parameters, counts of each kind of record, checksums, consume queues."""
    pick = msgs.pick
    last = int(msgs.offset[-1] + pool["length"][pick[-1]])
    segment_size = params["segment_mib"] * MIB
    combo = pool["combo"][pick]
    return {
        "params": params, "messages": len(pick), "data_end": last,
        "segments": [os.path.basename(p) for p in paths], "blanks": blanks,
        "segment_data": [min(segment_size, last - k * segment_size) for k in range(len(paths))],
        "compressed": int(pool["compressed"][pick].sum()), "v2": int(pool["v2"][pick].sum()),
        "born_v6": int((combo & 1).sum()), "store_v6": int((combo >> 1 & 1).sum()),
        "mean_record": round(float(pool["length"][pick].mean()), 1),
        "mean_body": round(float(pool["decoded_len"][pick].mean()), 1),
        "mean_properties": round(float(pool["properties"][pick].mean()), 2),
        "checksum": checksum(pool, msgs),
        "slice": checksum(pool, msgs, params["slice_mib"] * MIB),
        "consume_queues": queues,
    }


def load_manifest(folder: str, params: dict) -> dict | None:
    """The manifest of the data in ``folder`` if it was made with ``params`` and is complete."""
    try:
        with open(os.path.join(folder, "manifest.json")) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return None
    if manifest.get("params") != params:
        return None
    commitlog = os.path.join(folder, "store", "commitlog")
    if sorted(os.listdir(commitlog)) != manifest["segments"]:
        return None
    return manifest


def ensure_store(data_dir: str, shape: str, mib: int, segment_mib: int, seed: int,
                 regenerate: bool = False, span_hours: float | None = None,
                 queue_factor: int = 1) -> tuple[str, dict]:
    """The store root and manifest of a generated log, generated unless already there."""
    params = data_params(shape, mib, segment_mib, seed, span_hours, queue_factor)
    span = "" if span_hours is None else f"-span{span_hours:g}h"
    span += "" if queue_factor == 1 else f"-queues{queue_factor}x"
    folder = os.path.join(data_dir, f"{shape}-{mib}mib-seg{segment_mib}-seed{seed}{span}")
    manifest = None if regenerate else load_manifest(folder, params)
    if manifest is None:
        print(f"generating the {shape!r} log ({mib} MiB in {segment_mib} MiB segments) into {folder} ...",
              flush=True)
        manifest = generate(folder, params)
        print(f"  {manifest['messages']:,} messages in {manifest['generation_seconds']} s "
              f"({manifest['pool_seconds']} s for the {params['pool']:,}-record pool)", flush=True)
    else:
        print(f"reusing the {shape!r} log: {manifest['messages']:,} messages in {folder} "
              f"(generated in {manifest['generation_seconds']} s)", flush=True)
    return os.path.join(folder, "store"), manifest


#: The bench scripts' defaults: ``benchmarks/data/`` and their seed.
DEFAULT_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
DEFAULT_SEED = 20261122


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python benchmarks/storegen.py``."""
    p = argparse.ArgumentParser(
        prog="storegen.py", description="Generate a broker store for the benchmarks: a commit log of the given "
                                        "size in segments, and its consume queues, under OUT/<kind>-<mib>mib-"
                                        "seg<segment-mib>-seed<seed>/store (reused when already there with the "
                                        "same parameters).")
    p.add_argument("--kind", choices=sorted(SHAPES), default="mixed",
                   help="the message mix: mixed (bodies of 100 B-4 KiB) or small (10-200 B) (default: mixed)")
    p.add_argument("--mib", type=_positive, default=1100, help="MiB of message data (default: 1100)")
    p.add_argument("--segment-mib", type=_positive, default=1024,
                   help="commit-log segment size in MiB (default: 1024, the broker's 1 GiB)")
    p.add_argument("--out", default=DEFAULT_DATA_DIR,
                   help=f"folder the store is generated under (default: {DEFAULT_DATA_DIR})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"random seed: the same seed gives the same bytes (default: {DEFAULT_SEED})")
    p.add_argument("--span-hours", type=float,
                   help="spread the store times over this many hours (default: about 1 ms apart)")
    p.add_argument("--queue-factor", type=_positive, default=1,
                   help="give each topic this many times its queues: 20 queues in all by default, 1,000 with 50 "
                        "(a broker with many queues)")
    p.add_argument("--regenerate", action="store_true", help="generate again even when the store is there")
    return p


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    """Generate (or reuse) the store the options describe; prints its root."""
    args = build_parser().parse_args(argv)
    root, _ = ensure_store(args.out, args.kind, args.mib, args.segment_mib, args.seed,
                           regenerate=args.regenerate, span_hours=args.span_hours, queue_factor=args.queue_factor)
    print(root)
    return 0


if __name__ == "__main__":
    sys.exit(main())

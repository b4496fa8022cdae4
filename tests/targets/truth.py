"""RocketMQ's ground truth against what a target's driver printed, value by value.

Each ``check_*`` runs a driver (``harness.Driver``) on the real vector files of one version
and records every compared value in a :class:`Tally` per spec: how many values were compared
and, per field (``"<spec>.<type>.<member>"``), where they differed. The comparisons are the
ones ``tests/test_javascript.py`` makes, for every language.
"""

from __future__ import annotations

import json
from pathlib import Path

from rmqformats.consumequeue_ext import MAX_ADDR, is_ext_address
from rmqformats.index import index_key_hash

from conftest import FIXTURES, VERSIONS, store_path, truth_records
from test_commitlog_reference_parsers import _row

#: ``BLANK_MAGIC_CODE``, signed as RocketMQ's Java and the specs hold it.
BLANK = -875286124
MISSING = object()


def leaves(value) -> int:
    """How many scalar values ``value`` holds (what one comparison checks)."""
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values()) or 1
    if isinstance(value, (list, tuple)):
        return sum(leaves(v) for v in value) or 1
    return 1


class Tally:
    """Compared values and differences of one spec."""

    def __init__(self, spec: str):
        self.spec = spec
        self.checked = 0
        self.diffs: dict[str, list[str]] = {}
        self.errors: list[str] = []  # parse errors the driver printed
        #: Every field compared (``"<spec>.<field>"``), also those that were equal.
        self.fields: set[str] = set()

    def eq(self, field: str, got, want, where: str = "") -> bool:
        self.checked += leaves(want)
        self.fields.add(f"{self.spec}.{field}")
        if got != want:
            self.diffs.setdefault(f"{self.spec}.{field}", []).append(f"{where}: {_short(got)} != {_short(want)}")
            return False
        return True

    def parsed(self, dumps: list, files) -> list:
        """The dumps, with parse errors recorded (as the field ``<spec>._error``)."""
        for f, d in zip(files, dumps):
            if "_error" in d:
                self.errors.append(f"{f}: {d['_error']}")
                self.diffs.setdefault(f"{self.spec}._error", []).append(f"{f}: {d['_error']}")
        return dumps


def _short(v) -> str:
    text = repr(v)
    return text if len(text) < 120 else text[:117] + "..."


def get(d, *keys):
    """``d[k1][k2]...``, or :data:`MISSING` when the driver did not print it."""
    for k in keys:
        if isinstance(d, dict) and k in d:
            d = d[k]
        elif isinstance(d, list) and isinstance(k, int) and -len(d) <= k < len(d):
            d = d[k]
        else:
            return MISSING
    return d


def _truth(version: str, name: str):
    path = FIXTURES / version / "truth" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


# -- commit log and message batches -----------------------------------------------------------

#: The truth's message keys, by the spec member they come from.
MESSAGE_FIELDS = {
    "commitlogOffset": "record.len_record", "magicCode": "record.magic", "storeSize": "record.len_record",
    "bodyCRC": "message.body_crc", "queueId": "message.queue_id", "flag": "message.flag",
    "queueOffset": "message.queue_offset", "physicalOffset": "message.ofs_physical", "sysFlag": "message.sys_flag",
    "bornTimestamp": "message.born_timestamp", "bornHost": "host.address", "bornPort": "host.port",
    "storeTimestamp": "message.store_timestamp", "storeHost": "host.address", "storePort": "host.port",
    "reconsumeTimes": "message.reconsume_times", "preparedTransactionOffset": "message.ofs_prepared_transaction",
    "topic": "message.topic", "properties": "message.properties", "propertiesString": "message.properties",
    "msgId": "message.ofs_physical", "uniqKey": "message.properties", "tags": "message.properties",
    "keys": "message.properties", "bodyRawBase64": "message.body", "bodyLength": "message.body",
    "bodyDecompressedBase64": "message.body", "delayTimeLevel": "message.properties",
}
INNER_KEY = "innerMessages_MessageDecoder.decodeMessages"


def check_commitlog(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    t = tallies.setdefault("rocketmq_commitlog", Tally("rocketmq_commitlog"))
    tb = tallies.setdefault("rocketmq_message_batch", Tally("rocketmq_message_batch"))
    segments = sorted((store_path(version) / "commitlog").iterdir())
    dumps = t.parsed(driver.run("rocketmq_commitlog", segments, tmp=tmp), segments)
    located = []  # (commit-log offset, record)
    for seg, d in zip(segments, dumps):
        pos = 0
        for rec in get(d, "records") if isinstance(get(d, "records"), list) else []:
            located.append((int(seg.name) + pos, rec))
            if get(rec, "is_message") is not True:
                break
            pos += rec["len_record"]
    messages = [(off, rec) for off, rec in located if get(rec, "is_message") is True]
    inner = [(off, get(rec, "body", "body")) for off, rec in messages
             if get(rec, "body", "sys_flag", "is_inner_batch") is True]
    body_files = []
    for off, body in inner:
        path = tmp / f"batch-{version}-{off}"
        path.write_bytes(body)
        body_files.append(path)
    batches = {}
    if body_files:
        out = tb.parsed(driver.run("rocketmq_message_batch", body_files, tmp=tmp), body_files)
        batches = {body: d for (_, body), d in zip(inner, out)}

    def batch(body: bytes) -> list[tuple]:
        items = get(batches.get(body, {}), "messages")
        if not isinstance(items, list):
            return []
        return [(get(i, "flag"), get(i, "properties"), get(i, "body")) for i in items]

    records = truth_records(version)
    truth = {r["commitlogOffset"]: r for r in records if r["kind"] == "MESSAGE"}
    t.eq("records", sorted(off for off, _ in messages), sorted(truth), "message offsets")
    for off, rec in messages:
        want = truth.get(off)
        if want is None:
            continue
        try:
            row = _row(off, rec["len_record"], rec["magic"], rec["body"], batch)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            t.eq("message._structure", repr(err), None, f"@{off}")
            continue
        for key, value in row.items():
            if key == INNER_KEY:
                tb.eq("messages", value, want.get(key), f"@{off}")
            else:
                t.eq(MESSAGE_FIELDS.get(key, key), value, want.get(key), f"@{off} {key}")
    ends = [(off, get(rec, "len_record"), get(rec, "magic")) for off, rec in located
            if get(rec, "is_message") is not True]
    blanks = [(r["commitlogOffset"], r["totalSize"], BLANK) for r in records if r["kind"] == "BLANK"]
    last = records[-1]
    t.eq("record.magic", ends, blanks + [(last["commitlogOffset"] + last["totalSize"], 0, 0)], "blank and end records")


# -- consume queues --------------------------------------------------------------------------------

def check_consumequeue(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    t = tallies.setdefault("rocketmq_consumequeue", Tally("rocketmq_consumequeue"))
    truth = _truth(version, "consumequeue.json")
    root = store_path(version) / "consumequeue"
    files = sorted(root.glob("*/*/*"))
    dumps = dict(zip(files, t.parsed(driver.run("rocketmq_consumequeue", files, tmp=tmp), files)))
    names = {"cqIndex": "units", "commitlogOffset": "unit.ofs_commitlog", "size": "unit.len_message",
             "tagsCode": "unit.tags_code"}
    for topic, queues in truth.items():
        for qid, q in queues.items():
            folder = root / topic / qid
            units = []
            for name in q["files"]:
                base = int(name) // 20
                for i, u in enumerate(get(dumps.get(folder / name, {}), "units") or []):
                    if get(u, "is_valid") is not True:
                        break
                    units.append({"cqIndex": base + i, "commitlogOffset": get(u, "ofs_commitlog"),
                                  "size": get(u, "len_message"), "tagsCode": get(u, "tags_code")})
            t.eq("units", len(units), len(q["units"]), f"{topic}/{qid} unit count")
            for got, want in zip(units, q["units"]):
                for k, v in want.items():
                    t.eq(names[k], got.get(k), v, f"{topic}/{qid}#{want['cqIndex']} {k}")


LONG_MIN = -(1 << 63)
#: tagsCode values across the s8 range: tags hashes (sign-extended Java ints), a delay due time,
#: and ext addresses (an ext offset plus ``Long.MIN_VALUE``), at both ends of their range.
TAGS_CODES = (0, 5, -5, 2147483647, -2147483648, 1795377022390, MAX_ADDR, MAX_ADDR - 1, -4294967296,
              -4294967297, LONG_MIN + 123_456_789, LONG_MIN + 1, LONG_MIN)


def check_ext_addresses(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    """A consume-queue file whose tagsCode values span the s8 range, ext addresses included.

    No vector store was written with ``enableConsumeQueueExt``, so this file is built through
    the spec (the construct schema); the values it was built from are the truth. The fields of
    units holding an ext address are named ``...[ext address]``, so that a language whose
    runtime cannot read them names that limit alone.
    """
    if version != VERSIONS[0]:
        return  # one built file, whatever the vector store
    from rmqformats.synth import encode_cq_units

    t = tallies.setdefault("rocketmq_consumequeue", Tally("rocketmq_consumequeue"))
    units = [(1000 * i, 100 + i, code) for i, code in enumerate(TAGS_CODES)]
    path = tmp / "ext-addresses" / "00000000000000000000"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode_cq_units(units) + bytes(20))  # and the zero tail, as the broker's files end
    [dump] = t.parsed(driver.run("rocketmq_consumequeue", [path], tmp=tmp), [path])
    parsed = get(dump, "units") or []
    t.eq("units", len(parsed), len(units) + 1, "units and the zero tail")
    for u, (ofs, size, code) in zip(parsed, units):
        ext = is_ext_address(code)
        tag = "[ext address]" if ext else ""
        where = f"tagsCode {code}"
        t.eq("unit.ofs_commitlog", get(u, "ofs_commitlog"), ofs, where)
        t.eq("unit.len_message", get(u, "len_message"), size, where)
        t.eq(f"unit.tags_code{tag}", get(u, "tags_code"), code, where)
        t.eq(f"unit.is_ext_address{tag}", get(u, "is_ext_address"), ext, where)


def check_batch_consumequeue(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    truth = _truth(version, "batchconsumequeue.json")
    if not truth:
        return
    t = tallies.setdefault("rocketmq_batch_consumequeue", Tally("rocketmq_batch_consumequeue"))
    root = store_path(version) / "batchconsumequeue"
    keys = {"commitlogOffset": "ofs_commitlog", "size": "len_message", "tagsCode": "tags_code",
            "storeTime": "store_timestamp", "msgBaseOffset": "msg_base_offset", "batchSize": "num_messages",
            "compactedOffset": "compacted_offset", "reservedInt": "reserved"}
    for topic, queues in truth.items():
        for qid, q in queues.items():
            files = [root / topic / qid / name for name in q["files"]]
            got = []
            for path, d in zip(files, t.parsed(driver.run("rocketmq_batch_consumequeue", files, tmp=tmp), files)):
                for i, u in enumerate(get(d, "units") or []):
                    if get(u, "is_accepted") is not True:
                        break
                    got.append((path.name, i * q["unitSize"], u))
            t.eq("units", len(got), len(q["units"]), f"{topic}/{qid} unit count")
            for (name, pos, u), want in zip(got, q["units"]):
                t.eq("units", (name, pos), (want["file"], want["filePosition"]), f"{topic}/{qid}")
                for k, member in keys.items():
                    t.eq(f"unit.{member}", get(u, member), want[k], f"{name}+{pos} {k}")
                # The end offset of the batch: base offset plus count, 64-bit.
                t.eq("unit.msg_end_offset", get(u, "msg_end_offset"), want["msgBaseOffset"] + want["batchSize"],
                     f"{name}+{pos}")


# -- index files ---------------------------------------------------------------------------------

def _walk(d: dict, key_hash: int, hits: list, max_num: int) -> None:
    """``IndexFile.selectPhyOffset`` over a parsed file, for the whole time range."""
    header, tables = d["header"], d["tables"]
    slots, entries = tables["hash_slots"], tables["entries"]
    next_index = header["next_index"]
    n = slots[key_hash % len(slots)]["latest_index"]
    if n <= 0 or n > next_index or next_index <= 1:
        return
    for _ in range(len(entries)):
        if len(hits) >= max_num or n >= len(entries):
            return
        e = entries[n]
        if e["time_diff"] < 0:
            return
        if e["key_hash"] == key_hash:
            hits.append(e["ofs_physical"])
        prev = e["prev_index"]
        if prev <= 0 or prev > next_index or prev == n:
            return
        n = prev


def check_index(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    t = tallies.setdefault("rocketmq_index_file", Tally("rocketmq_index_file"))
    truth = _truth(version, "index.json")
    config = json.loads((FIXTURES / version / "store_config.json").read_text())
    max_num = config["fullMessageStoreConfig"]["maxMsgsNumBatch"]
    files = [store_path(version) / "index" / f["file"] for f in truth["files"]]
    dumps = t.parsed(driver.run("rocketmq_index_file", files, instances=["tables", "last_entry"], tmp=tmp), files)
    header_keys = {"beginTimestamp": "begin_timestamp", "endTimestamp": "end_timestamp",
                   "endPhyOffset": "ofs_end_physical", "header_beginPhyOffset": "ofs_begin_physical",
                   "header_hashSlotCount": "num_hash_slots_used", "header_indexCount": "next_index"}
    for path, d, want in zip(files, dumps, truth["files"]):
        for k, member in header_keys.items():
            t.eq(f"header.{member}", get(d, "header", member), want[k], f"{path.name} {k}")
        t.eq("is_size_consistent", get(d, "is_size_consistent"), True, path.name)
        t.eq("num_hash_slots", get(d, "num_hash_slots"), config["maxHashSlotNum"], path.name)
        t.eq("num_index", get(d, "num_index"), config["maxIndexNum"], path.name)
        entries = get(d, "tables", "entries")
        n = get(d, "header", "next_index")
        if isinstance(entries, list) and isinstance(n, int):
            if 0 < n <= len(entries):
                t.eq("last_entry", get(d, "last_entry"), entries[n - 1], path.name)
            else:  # the tables were read short: a difference in them, not a crash of the check
                t.eq("tables.entries", len(entries), config["maxIndexNum"], f"{path.name} entries read")
    got = {}
    for query in truth["queries_topic#key_to_phyOffsets"]:
        hits: list = []
        try:
            for d in reversed(dumps):  # newest file first
                _walk(d, index_key_hash(query), hits, max_num)
                if len(hits) >= max_num:
                    break
        except (KeyError, TypeError, IndexError, ZeroDivisionError) as err:  # tables read short
            hits = [repr(err)]
        got[query] = hits
    for query, want in truth["queries_topic#key_to_phyOffsets"].items():
        t.eq("tables.entries", got[query], want, f"lookup {query}")


# -- checkpoint and the timer store ---------------------------------------------------------

def check_checkpoint(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    t = tallies.setdefault("rocketmq_checkpoint", Tally("rocketmq_checkpoint"))
    want = _truth(version, "checkpoint.json")
    files = [store_path(version) / "checkpoint"]
    [d] = t.parsed(driver.run("rocketmq_checkpoint", files, tmp=tmp), files)
    for member, key in (("physic_msg_timestamp", "physicMsgTimestamp"), ("logics_msg_timestamp", "logicsMsgTimestamp"),
                        ("index_msg_timestamp", "indexMsgTimestamp"), ("ofs_master_flushed", "masterFlushedOffset"),
                        ("ofs_confirm_phy", "confirmPhyOffset")):
        t.eq(member, get(d, member), want.get(key, 0), version)
    reserved = get(d, "reserved")
    size = len(reserved) + 40 if isinstance(reserved, bytes) else reserved
    t.eq("reserved", size, want["checkpointFileSize"], version)
    min_ts = min(want["physicMsgTimestamp"], want["logicsMsgTimestamp"]) - 3000
    t.eq("min_timestamp", get(d, "min_timestamp"), min_ts, version)
    t.eq("min_timestamp_index", get(d, "min_timestamp_index"), min(min_ts, want["indexMsgTimestamp"]), version)


def check_timer(driver, version: str, tmp: Path, tallies: dict[str, Tally]) -> None:
    truth = _truth(version, "timer.json")
    if not truth:
        return
    t = tallies.setdefault("rocketmq_timer_log", Tally("rocketmq_timer_log"))
    segments = sorted((store_path(version) / "timerlog").iterdir())
    units, ends = [], []
    for seg, d in zip(segments, t.parsed(driver.run("rocketmq_timer_log", segments, tmp=tmp), segments)):
        for i, u in enumerate(get(d, "units") or []):
            offset = int(seg.name) + i * 52
            if get(u, "is_unit") is not True:
                ends.append((seg.name, offset, get(u, "len_unit"), get(u, "ofs_prev"), get(u, "magic")))
                break
            units.append((seg.name, offset, u))
    unit_keys = {"size": "unit.len_unit", "prevPos": "unit.ofs_prev", "magic": "unit.magic",
                 "magicRoll": "unit.is_roll", "magicDelete": "unit.is_delete"}
    body_keys = {"currWriteTimeMs": "curr_write_time_ms", "delayTime": "delay_ms",
                 "delayedTimeMs": "delayed_time_ms", "offsetPy": "ofs_commitlog", "sizePy": "len_message",
                 "hashCodeOfRealTopic": "topic_hash", "reserved": "reserved"}
    expected = [u for u in truth["timerLogUnits"] if u["kind"] == "UNIT"]
    t.eq("units", [(n, o) for n, o, _ in units], [(u["file"], u["timerLogOffset"]) for u in expected], "unit offsets")
    for (name, off, u), want in zip(units, expected):
        for k, field in unit_keys.items():
            t.eq(field, get(u, field.split(".")[1]), want[k], f"{name}+{off} {k}")
        for k, member in body_keys.items():
            t.eq(f"unit_body.{member}", get(u, "body", member), want[k], f"{name}+{off} {k}")
    blanks = [(u["file"], u["timerLogOffset"], u["size"], u["prevPos"], u["magic"])
              for u in truth["timerLogUnits"] if u["kind"] == "BLANK"]
    flushed = truth["timerCheckpoint"]["lastTimerLogFlushPos"]
    t.eq("unit.magic", ends, blanks + [(segments[-1].name, flushed, 0, 0, 0)], "blank and end units")

    tw = tallies.setdefault("rocketmq_timer_wheel", Tally("rocketmq_timer_wheel"))
    root = store_path(version)
    precision = json.loads((FIXTURES / version / "store_config.json").read_text())["timerPrecisionMs"]
    files = [root / "timerwheel"]
    [wheel] = tw.parsed(driver.run("rocketmq_timer_wheel", files, filter={"array": "slots", "where": "is_used"},
                                   tmp=tmp), files)
    tw.eq("slots", get(wheel, "num_slots") * truth["slotSize"] if isinstance(get(wheel, "num_slots"), int) else None,
          truth["wheelFileSize"], "file size")
    slots = get(wheel, "slots") if isinstance(get(wheel, "slots"), list) else []
    tw.eq("slots", [i for i, _ in slots], [s["slotIndex"] for s in truth["nonEmptySlots"]], "used slots")
    for (i, s), want in zip(slots, truth["nonEmptySlots"]):
        tu = get(s, "time_units")
        tw.eq("slot.time_units", tu * precision if isinstance(tu, int) else tu, want["timeMs"], f"slot {i}")
        for member, key in (("ofs_first", "firstPos"), ("ofs_last", "lastPos"), ("num_messages", "num"),
                            ("reserved", "magic")):
            tw.eq(f"slot.{member}", get(s, member), want[key], f"slot {i}")

    tc = tallies.setdefault("rocketmq_timer_check", Tally("rocketmq_timer_check"))
    want = truth["timerCheckpoint"]
    files = [root / "config" / "timercheck"]
    [cp] = tc.parsed(driver.run("rocketmq_timer_check", files, tmp=tmp), files)
    for member, key in (("last_read_time_ms", "lastReadTimeMs"), ("ofs_last_timer_log_flush", "lastTimerLogFlushPos"),
                        ("last_timer_queue_offset", "lastTimerQueueOffset"),
                        ("master_timer_queue_offset", "masterTimerQueueOffset")):
        tc.eq(member, get(cp, member), want[key], version)
    for member, key in (("state_version", "dataVersion_stateVersion"), ("timestamp", "dataVersion_timestamp"),
                        ("counter", "dataVersion_counter")):
        tc.eq(f"data_version.{member}", get(cp, "data_version", member), want[key], version)


CHECKS = {"commitlog": check_commitlog, "consumequeue": check_consumequeue, "ext_addresses": check_ext_addresses,
          "batch_consumequeue": check_batch_consumequeue, "index": check_index,
          "checkpoint": check_checkpoint, "timer": check_timer}

#: The specs each check reads.
SPECS_OF = {"commitlog": ["rocketmq_commitlog", "rocketmq_message_batch"], "consumequeue": ["rocketmq_consumequeue"],
            "ext_addresses": ["rocketmq_consumequeue"],
            "batch_consumequeue": ["rocketmq_batch_consumequeue"], "index": ["rocketmq_index_file"],
            "checkpoint": ["rocketmq_checkpoint"],
            "timer": ["rocketmq_timer_log", "rocketmq_timer_wheel", "rocketmq_timer_check"]}

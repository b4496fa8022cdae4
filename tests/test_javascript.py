"""The JavaScript parsers (what the Kaitai Web IDE runs) read every real vector file as RocketMQ does.

Every spec is compiled to JavaScript with the pinned compiler and run under
Node with the npm ``kaitai-struct`` runtime (``tools/ksc``) on the real store
files in ``tests/fixtures``; the parsed values are compared with the same
ground truth the Python parser tests use. The Web IDE labels
(``-webide-representation``) are rendered from the same objects and checked
to be complete and to tell records apart.

No vector store was written with ``enableConsumeQueueExt``, so
``rocketmq_consumequeue_ext`` has no real file to read (checked below); its
JavaScript parser reads files built from the spec instead. JavaScript numbers
hold integers exactly up to 2**53: the 64-bit fields of the vectors are well
inside that, but an ext address in a consume-queue unit (about -2**63) is not.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rmqformats.codegen.__main__ import compile_ksy
from rmqformats.index import index_key_hash

from conftest import FIXTURES, VERSIONS, store_path, truth_records
from test_commitlog_reference_parsers import _row
from truthcmp import count_mismatches

sys.path.insert(0, str(Path(__file__).with_name("targets")))
from truth import _walk  # noqa: E402  (IndexFile.selectPhyOffset over a parsed file, shared with every target)

REPO = Path(__file__).resolve().parents[1]
KSC = REPO / "tools" / "ksc"
FORMATS = REPO / "formats"
DUMP = Path(__file__).with_name("kaitai_dump.js")
#: ``BLANK_MAGIC_CODE``, signed as RocketMQ's Java and the spec hold it.
BLANK = -875286124
LONG_MAX = (1 << 63) - 1


@pytest.fixture(scope="module")
def parsers(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("js")
    compile_ksy("javascript", sorted(FORMATS.glob("*.ksy")), out, KSC)
    return out


def _bytes(value):
    """JSON from the dumper with its ``{"$b64": ...}`` byte arrays as bytes."""
    if isinstance(value, dict):
        if set(value) == {"$b64"}:
            return base64.b64decode(value["$b64"])
        return {k: _bytes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_bytes(v) for v in value]
    return value


def run_js(parsers: Path, spec_id: str, files, *, instances=(), filter=None, tmp: Path,
           allow_errors: bool = False) -> list:
    """Parse ``files`` (paths, or ``(path, offset, length)``) with the JavaScript parser of ``spec_id``."""
    class_name = "".join(p.capitalize() for p in spec_id.split("_"))
    job = {
        "parser": str(parsers / f"{class_name}.js"), "ksy": str(FORMATS / f"{spec_id}.ksy"),
        "files": [{"path": str(f)} if not isinstance(f, tuple) else
                  {"path": str(f[0]), "offset": f[1], "length": f[2]} for f in files],
        "instances": list(instances), "filter": filter,
    }
    job_path = tmp / f"job-{spec_id}-{os.getpid()}.json"
    job_path.write_text(json.dumps(job))
    env = {"NODE_PATH": str(KSC / "node_modules"), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run(["node", str(DUMP), str(job_path)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    out = _bytes(json.loads(proc.stdout))
    errors = [(f, o["_error"]) for f, o in zip(files, out) if "_error" in o]
    assert allow_errors or errors == []
    return out


def _labels_complete(objs) -> None:
    """No label shows a missing value or a cut byte list."""
    for o in objs:
        assert o["_label"] and "<no value>" not in o["_label"] and "[" not in o["_label"], o["_label"]


# -- commit log and message batches -----------------------------------------------------------

#: SYSFLAG bits and bit groups by the names the label gives them (MessageSysFlag's constants).
SYS_FLAG_NAMES = [(0x1, 0x1, "COMPRESSED"), (0x2, 0x2, "MULTI_TAGS"), (0xC, 0x4, "PREPARED"), (0xC, 0x8, "COMMIT"),
                  (0xC, 0xC, "ROLLBACK"), (0x10, 0x10, "BORNHOST_V6"), (0x20, 0x20, "STOREHOST_V6"),
                  (0x40, 0x40, "NEED_UNWRAP"), (0x80, 0x80, "INNER_BATCH"), (0x700, 0x100, "LZ4"),
                  (0x700, 0x200, "ZSTD"), (0x700, 0x300, "ZLIB")]


def _flag_names(sys_flag: int) -> str:
    names = [name for mask, value, name in SYS_FLAG_NAMES if sys_flag & mask == value]
    if sys_flag >> 11:
        names.append("RESERVED_BITS")
    return " ".join(names) or "none"


@pytest.mark.parametrize("version", VERSIONS)
def test_commit_log_and_inner_batches_equal_truth(parsers, tmp_path, version):
    segments = sorted((store_path(version) / "commitlog").iterdir())
    dumps = run_js(parsers, "rocketmq_commitlog", segments, tmp=tmp_path)
    located = []  # (commit-log offset, record)
    for seg, d in zip(segments, dumps):
        pos = 0
        for rec in d["records"]:
            located.append((int(seg.name) + pos, rec))
            if not rec["is_message"]:
                break
            pos += rec["len_record"]
    # Inner-batch bodies go through the JavaScript message-batch parser.
    inner = [(off, rec["body"]["body"]) for off, rec in located
             if rec["is_message"] and rec["body"]["sys_flag"]["is_inner_batch"]]
    body_files = []
    for off, body in inner:
        path = tmp_path / f"batch-{off}"
        path.write_bytes(body)
        body_files.append(path)
    batches = {body: d for (_, body), d in
               zip(inner, run_js(parsers, "rocketmq_message_batch", body_files, tmp=tmp_path))}
    assert inner or version == "rocketmq-4.9.7", "the 5.x vectors hold inner batches"

    def batch(body: bytes) -> list[tuple]:
        items = batches[body]["messages"]
        _labels_complete(items)
        return [(i["flag"], i["properties"], i["body"]) for i in items]

    rows = [_row(off, rec["len_record"], rec["magic"], rec["body"], batch) for off, rec in located if rec["is_message"]]
    records = truth_records(version)
    n, details = count_mismatches(rows, [t for t in records if t["kind"] == "MESSAGE"])
    assert n == 0, details
    ends = [(off, rec["len_record"], rec["magic"]) for off, rec in located if not rec["is_message"]]
    blanks = [(t["commitlogOffset"], t["totalSize"], BLANK) for t in records if t["kind"] == "BLANK"]
    last = records[-1]
    assert ends == blanks + [(last["commitlogOffset"] + last["totalSize"], 0, 0)]

    # Web IDE labels: hosts as text, every set SYSFLAG bit named, no two records alike.
    truth = {t["commitlogOffset"]: t for t in records if t["kind"] == "MESSAGE"}
    for off, rec in located:
        if not rec["is_message"]:
            continue
        m, t = rec["body"], truth[off]
        for host, key in ((m["born_host"], "born"), (m["store_host"], "store")):
            assert ipaddress.ip_address(host["address_text"]) == ipaddress.ip_address(t[f"{key}Host"])
            assert host["_label"] == f"{host['address_text']} port {t[f'{key}Port']}"
        assert m["sys_flag"]["_label"] == _flag_names(t["sysFlag"])
        assert f"flags {_flag_names(t['sysFlag'])}," in rec["_label"]
    _labels_complete([rec for _, rec in located if rec["is_message"]])
    for d in dumps:
        labels = [r["_label"] for r in d["records"]]
        assert len(set(labels)) == len(labels)


def test_labels_show_every_host_and_flag_kind(parsers, tmp_path):
    """The vectors cover IPv6 hosts on both sides and inner-batch, compressed and transaction flags."""
    segments = sorted((store_path("rocketmq-5.1.4") / "commitlog").iterdir())
    labels = [r["_label"] for d in run_js(parsers, "rocketmq_commitlog", segments, tmp=tmp_path)
              for r in d["records"]]
    text = "\n".join(labels)
    for needle in ("born 2001:0db8:0000:0000:0000:0000:0000:0010 port", "store 2001:0db8:", "born 192.0.2.10 port",
                   "flags NEED_UNWRAP INNER_BATCH,", "flags COMPRESSED ZSTD,", "flags COMMIT,", "BLANK "):
        assert needle in text, needle


# -- consume queues ------------------------------------------------------------------------------

def _truth(version: str, name: str):
    path = FIXTURES / version / "truth" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


@pytest.mark.parametrize("version", VERSIONS)
def test_consume_queues_equal_truth(parsers, tmp_path, version):
    truth = _truth(version, "consumequeue.json")
    root = store_path(version) / "consumequeue"
    files = sorted(root.glob("*/*/*"))
    dumps = dict(zip(files, run_js(parsers, "rocketmq_consumequeue", files, tmp=tmp_path)))
    seen = {}
    for topic, queues in truth.items():
        for qid, q in queues.items():
            folder = root / topic / qid
            assert sorted(p.name for p in folder.iterdir()) == q["files"]
            units = []
            for name in q["files"]:
                base = int(name) // 20
                for i, u in enumerate(dumps[folder / name]["units"]):
                    if not u["is_valid"]:
                        break
                    units.append({"cqIndex": base + i, "commitlogOffset": u["ofs_commitlog"],
                                  "size": u["len_message"], "tagsCode": u["tags_code"]})
                    _labels_complete([u])
            assert units == q["units"], (topic, qid)
            seen[(topic, qid)] = units
    assert len(seen) == len({(p.parent.parent.name, p.parent.name) for p in files})


@pytest.mark.parametrize("version", [v for v in VERSIONS if _truth(v, "batchconsumequeue.json")])
def test_batch_consume_queues_equal_truth(parsers, tmp_path, version):
    truth = _truth(version, "batchconsumequeue.json")
    root = store_path(version) / "batchconsumequeue"
    for topic, queues in truth.items():
        for qid, q in queues.items():
            files = [root / topic / qid / name for name in q["files"]]
            got = []
            for path, d in zip(files, run_js(parsers, "rocketmq_batch_consumequeue", files, tmp=tmp_path)):
                for i, u in enumerate(d["units"]):
                    if not u["is_accepted"]:
                        break
                    got.append({"file": path.name, "filePosition": i * q["unitSize"],
                                "commitlogOffset": u["ofs_commitlog"], "size": u["len_message"],
                                "tagsCode": u["tags_code"], "storeTime": u["store_timestamp"],
                                "msgBaseOffset": u["msg_base_offset"], "batchSize": u["num_messages"],
                                "compactedOffset": u["compacted_offset"], "reservedInt": u["reserved"]})
                    _labels_complete([u])
            assert got == q["units"]


def test_no_vector_has_a_consume_queue_extension():
    """rocketmq_consumequeue_ext has no real file to compare; its tests use built files."""
    assert not any((store_path(v) / "consumequeue_ext").exists() for v in VERSIONS)


def test_consume_queue_extension_files_built_from_the_spec(parsers, tmp_path):
    """Without a real file, built files (construct schemas) read back as the Python API reads them."""
    from rmqformats.consumequeue_ext import ConsumeQueueExt

    from test_consumequeue_ext import FILE_SIZE, SPECS
    from rmqformats.synth.queues import write_consumequeue_ext

    folder = tmp_path / "ext"
    write_consumequeue_ext(folder, SPECS, file_size=FILE_SIZE)
    files = sorted(folder.iterdir())
    got = []
    for path, d in zip(files, run_js(parsers, "rocketmq_consumequeue_ext", files, tmp=tmp_path)):
        pos = int(path.name)
        *units, end = d["units"]
        assert not end["is_unit"] and end["is_end_marker"] == (path == files[0])
        for u in units:
            b = u["body"]
            got.append((pos, u["len_unit"], b["tags_code"], b["msg_store_time"], b["filter_bit_map"]))
            assert b["len_unit_computed"] == u["len_unit"]
            pos += u["len_unit"]
        _labels_complete(units)
    api = [(u.ext_offset, u.size, u.tags_code, u.msg_store_time, u.filter_bitmap) for u in ConsumeQueueExt(folder)]
    assert got == api and len(got) == len(SPECS)


# -- index files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_index_files_equal_truth(parsers, tmp_path, version):
    truth = _truth(version, "index.json")
    config = json.loads((FIXTURES / version / "store_config.json").read_text())
    max_num = config["fullMessageStoreConfig"]["maxMsgsNumBatch"]
    files = [store_path(version) / "index" / t["file"] for t in truth["files"]]
    dumps = run_js(parsers, "rocketmq_index_file", files, instances=["tables", "last_entry"], tmp=tmp_path)
    for path, d, t in zip(files, dumps, truth["files"]):
        h = d["header"]
        assert path.stat().st_size == t["fileSize"] and d["is_size_consistent"]
        assert (h["begin_timestamp"], h["end_timestamp"], h["ofs_end_physical"], h["ofs_begin_physical"],
                h["num_hash_slots_used"], h["next_index"]) == (
            t["beginTimestamp"], t["endTimestamp"], t["endPhyOffset"], t["header_beginPhyOffset"],
            t["header_hashSlotCount"], t["header_indexCount"])
        assert d["num_hash_slots"] == config["maxHashSlotNum"] and d["num_index"] == config["maxIndexNum"]
        written = d["tables"]["entries"][1:h["next_index"]]
        assert d["last_entry"] == written[-1]
        _labels_complete([h, d["tables"], *written, *d["tables"]["hash_slots"]])
        labels = [e["_label"] for e in written]
        assert len(set(labels)) == len(labels)
    got = {}
    for query in truth["queries_topic#key_to_phyOffsets"]:
        hits: list = []
        for d in reversed(dumps):  # newest file first
            _walk(d, index_key_hash(query), hits, max_num)
            if len(hits) >= max_num:
                break
        got[query] = hits
    assert got == truth["queries_topic#key_to_phyOffsets"]


# -- checkpoint and the timer store ---------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_checkpoint_equals_truth(parsers, tmp_path, version):
    t = _truth(version, "checkpoint.json")
    [d] = run_js(parsers, "rocketmq_checkpoint", [store_path(version) / "checkpoint"], tmp=tmp_path)
    assert (d["physic_msg_timestamp"], d["logics_msg_timestamp"], d["index_msg_timestamp"],
            d["ofs_master_flushed"], d["ofs_confirm_phy"]) == (
        t["physicMsgTimestamp"], t["logicsMsgTimestamp"], t["indexMsgTimestamp"],
        t.get("masterFlushedOffset", 0), t.get("confirmPhyOffset", 0))
    assert len(d["reserved"]) + 40 == t["checkpointFileSize"]
    assert d["min_timestamp"] == min(t["physicMsgTimestamp"], t["logicsMsgTimestamp"]) - 3000
    assert d["min_timestamp_index"] == min(d["min_timestamp"], t["indexMsgTimestamp"])


TIMER_VERSIONS = [v for v in VERSIONS if _truth(v, "timer.json")]


@pytest.mark.parametrize("version", TIMER_VERSIONS)
def test_timer_log_equals_truth(parsers, tmp_path, version):
    truth = _truth(version, "timer.json")
    segments = sorted((store_path(version) / "timerlog").iterdir())
    units, ends, labels = [], [], []
    for seg, d in zip(segments, run_js(parsers, "rocketmq_timer_log", segments, tmp=tmp_path)):
        for i, u in enumerate(d["units"]):
            offset = int(seg.name) + i * 52
            if not u["is_unit"]:
                ends.append((seg.name, offset, u["len_unit"], u["ofs_prev"], u["magic"]))
                break
            b = u["body"]
            units.append({"file": seg.name, "timerLogOffset": offset, "size": u["len_unit"], "prevPos": u["ofs_prev"],
                          "magic": u["magic"], "magicRoll": u["is_roll"], "magicDelete": u["is_delete"],
                          "currWriteTimeMs": b["curr_write_time_ms"], "delayTime": b["delay_ms"],
                          "delayedTimeMs": b["delayed_time_ms"], "offsetPy": b["ofs_commitlog"],
                          "sizePy": b["len_message"], "hashCodeOfRealTopic": b["topic_hash"],
                          "reserved": b["reserved"]})
            _labels_complete([u, b])
            labels.append(u["_label"])
    keys = ("file", "timerLogOffset", "size", "prevPos", "magic", "magicRoll", "magicDelete", "currWriteTimeMs",
            "delayTime", "delayedTimeMs", "offsetPy", "sizePy", "hashCodeOfRealTopic", "reserved")
    expected = [{k: t[k] for k in keys} for t in truth["timerLogUnits"] if t["kind"] == "UNIT"]
    assert units == expected
    blanks = [(t["file"], t["timerLogOffset"], t["size"], t["prevPos"], t["magic"])
              for t in truth["timerLogUnits"] if t["kind"] == "BLANK"]
    flushed = truth["timerCheckpoint"]["lastTimerLogFlushPos"]
    assert ends == blanks + [(segments[-1].name, flushed, 0, 0, 0)]
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("version", TIMER_VERSIONS)
def test_timer_wheel_and_checkpoint_equal_truth(parsers, tmp_path, version):
    truth = _truth(version, "timer.json")
    root = store_path(version)
    precision = json.loads((FIXTURES / version / "store_config.json").read_text())["timerPrecisionMs"]
    [wheel] = run_js(parsers, "rocketmq_timer_wheel", [root / "timerwheel"],
                     filter={"array": "slots", "where": "is_used"}, tmp=tmp_path)
    assert wheel["num_slots"] * truth["slotSize"] == truth["wheelFileSize"]
    got = [{"slotIndex": i, "timeMs": s["time_units"] * precision, "firstPos": s["ofs_first"],
            "lastPos": s["ofs_last"], "num": s["num_messages"], "magic": s["reserved"]} for i, s in wheel["slots"]]
    keys = ("slotIndex", "timeMs", "firstPos", "lastPos", "num", "magic")
    assert got == [{k: t[k] for k in keys} for t in truth["nonEmptySlots"]]
    _labels_complete([s for _, s in wheel["slots"]])
    assert len({s["_label"] for _, s in wheel["slots"]}) == len(got)

    t = truth["timerCheckpoint"]
    [cp] = run_js(parsers, "rocketmq_timer_check", [root / "config" / "timercheck"], tmp=tmp_path)
    assert (cp["last_read_time_ms"], cp["ofs_last_timer_log_flush"], cp["last_timer_queue_offset"],
            cp["master_timer_queue_offset"], cp["data_version"]["state_version"], cp["data_version"]["timestamp"],
            cp["data_version"]["counter"]) == (
        t["lastReadTimeMs"], t["lastTimerLogFlushPos"], t["lastTimerQueueOffset"], t["masterTimerQueueOffset"],
        t["dataVersion_stateVersion"], t["dataVersion_timestamp"], t["dataVersion_counter"])
    _labels_complete([cp["data_version"]])

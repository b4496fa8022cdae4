"""``inspect``'s summary of the columnar walk against the vector stores' ground truth; record versions,
release evidence and body CRCs computed per record batch against the object API and zlib."""

from __future__ import annotations

import json
import shutil
import zlib
from collections import Counter, defaultdict

import numpy as np
import pytest

import rmqformats
from conftest import store_path, truth_records
from rmqformats.cli import main
from rmqformats.walk import crc
from rmqformats.columnar.summary import SUMMARY_COLUMNS, int_values, record_versions
from rmqformats.commitlog import MAGIC_BLANK
from rmqformats.synth.commitlog import MessageSpec, write_commitlog
from rmqformats.versions.detect import Detector

_V2_MAGIC = "0xDAA320AB"


def _inspect(capsys, *argv) -> tuple[int, dict]:
    code = main(["inspect", *map(str, argv), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_counts_bytes_versions_and_times_equal_the_truth(capsys, version):
    messages = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    code, info = _inspect(capsys, store_path(version), "--top", "0")
    assert code == 0 and info["messages"] == len(messages)
    count, size = Counter(), Counter()
    for t in messages:
        count[(t["topic"], t["queueId"])] += 1
        size[(t["topic"], t["queueId"])] += t["storeSize"]
    topics: dict = defaultdict(lambda: {"messages": 0, "bytes": 0, "queues": {}, "queueBytes": {}})
    for (topic, qid) in sorted(count):
        topics[topic]["messages"] += count[(topic, qid)]
        topics[topic]["bytes"] += size[(topic, qid)]
        topics[topic]["queues"][str(qid)] = count[(topic, qid)]
        topics[topic]["queueBytes"][str(qid)] = size[(topic, qid)]
    assert info["topics"] == dict(topics)
    assert info["messageBytes"] == sum(t["storeSize"] for t in messages)
    per_file = Counter(t["file"] for t in messages)
    assert {s["name"]: s["messages"] for s in info["segments"]} == {s["name"]: per_file[s["name"]]
                                                                   for s in info["segments"]}
    versions = Counter("V2" if t["magicCodeHex"] == _V2_MAGIC else "V1" for t in messages)
    assert info["recordVersions"] == dict(sorted(versions.items()))
    stamps = [t["storeTimestamp"] for t in messages]
    assert (info["firstStoreTimestamp"], info["lastStoreTimestamp"]) == (min(stamps), max(stamps))
    # Sorted by bytes, most first; every queue and topic listed with --top 0.
    assert [(r["topic"], r["queueId"]) for r in info["largestQueues"]] == \
        sorted(count, key=lambda k: (-size[k], -count[k], k[0], k[1]))
    assert [r["bytes"] for r in info["largestTopics"]] == sorted((t["bytes"] for t in topics.values()), reverse=True)


def test_top_limits_the_largest_lists_and_the_tables(capsys):
    _, info = _inspect(capsys, store_path("rocketmq-5.1.4"), "--top", "2")
    assert len(info["largestTopics"]) == len(info["largestQueues"]) == 2
    assert info["largestTopics"][0]["topic"] == "TopicBig" and len(info["topics"]) > 2
    assert main(["inspect", str(store_path("rocketmq-5.1.4")), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert f"largest topics by bytes (2 of {len(info['topics'])})" in out
    assert "largest queues by bytes (2 of " in out
    with pytest.raises(SystemExit) as exc:
        main(["inspect", str(store_path("rocketmq-5.1.4")), "--top", "-1"])
    assert exc.value.code == 2 and "must be 0 or more" in capsys.readouterr().err


def test_record_versions_per_row_equal_the_magic_codes(version):
    log = rmqformats.open_store(store_path(version)).commitlog
    truth = {t["commitlogOffset"]: 2 if t["magicCodeHex"] == _V2_MAGIC else 1
             for t in truth_records(version) if t["kind"] == "MESSAGE"}
    seen = {}
    for batch in log.batches(columns=SUMMARY_COLUMNS, decompress=False, batch_size=50):
        seen.update(zip(int_values(batch.column("commitLogOffset")).tolist(),
                        record_versions(batch, log.segments).tolist()))
    assert seen == truth


def test_record_versions_where_the_text_is_not_utf8(tmp_path):
    """A V2 record whose topic holds a cut UTF-8 sequence (decoded one byte longer) and a V1 record with a
    byte that is no UTF-8 in its properties: the version is read from the magic code, as the object API reads it."""
    folder = tmp_path / "commitlog"
    specs = [MessageSpec("Topic\u20ac", b"body", {"TAGS": "a"}, version=2),
             MessageSpec("TopicB", b"body", {"TAGS": "b\u00e9"}, version=1),
             MessageSpec("Topic\u20ac", b"body", {"TAGS": "c"}, version=2, compression="zstd")]
    placed = write_commitlog(folder, specs, segment_size=1 << 16)
    segment = next(folder.iterdir())
    data = bytearray(segment.read_bytes())
    for p in (placed[0], placed[2]):
        at = data.index("Topic\u20ac".encode(), p.commitlog_offset)
        data[at + 7] = ord("A")  # E2 82 AC -> E2 82 41: one U+FFFD and "A", a byte longer than stored
    at = data.index("b\u00e9".encode(), placed[1].commitlog_offset)
    data[at + 1] = 0xFF  # C3 -> FF: U+FFFD, two bytes longer
    segment.write_bytes(bytes(data))
    log = rmqformats.open_store(folder).commitlog
    objects = list(log.scan())
    assert [m.version for m in objects] == [2, 1, 2] and objects[0].topic == "Topic\ufffdA"
    batches = list(log.batches(columns=SUMMARY_COLUMNS, decompress=False))
    assert [t for b in batches for t in b.column("topic").to_pylist()] == [m.topic for m in objects]
    assert [v for b in batches for v in record_versions(b, log.segments).tolist()] == [2, 1, 2]


def _evidence_by_messages(log) -> dict:
    d = Detector()
    d.messages(log.scan())
    return d.result().to_json()


def _evidence_by_batches(log, batch_size: int) -> dict:
    d = Detector()
    for batch in log.batches(columns=SUMMARY_COLUMNS, decompress=False, batch_size=batch_size):
        d.batch(offsets=int_values(batch.column("commitLogOffset")), versions=record_versions(batch, log.segments),
                sys_flags=int_values(batch.column("sysFlag")), properties=batch.column("propertiesString"))
    return d.result().to_json()


@pytest.mark.parametrize("batch_size", [1, 7, 65536])
def test_batch_evidence_equals_message_evidence_on_the_vectors(version, batch_size):
    log = rmqformats.open_store(store_path(version)).commitlog
    assert _evidence_by_batches(log, batch_size) == _evidence_by_messages(log)


@pytest.mark.parametrize("batch_size", [1, 2, 3, 100])
def test_batch_evidence_keeps_the_order_of_the_messages(tmp_path, batch_size):
    """Several kinds of evidence in one message and across batches: found in the order the messages show them."""
    v6 = ("2001:db8::1", 10911)
    specs = [MessageSpec("TopicA", b"a", {"TAGS": "x"}),
             MessageSpec("TopicA", b"b", {"TAGS": "\u00e9\u00e9"}, store_host=v6, compression="zlib", version=2),
             MessageSpec("TopicB", b"c", {}, born_host=v6),
             MessageSpec("TopicB", b"d", {"TAGS": "y"}, trailing_separator=True, crc32_property=True),
             MessageSpec("TopicC", b"e", {"KEYS": "k"}, sys_flag=0x80)]
    write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 16)
    log = rmqformats.open_store(tmp_path / "commitlog").commitlog
    by_messages = _evidence_by_messages(log)
    assert _evidence_by_batches(log, batch_size) == by_messages
    seen = [e["observation"] for e in by_messages["evidence"] + by_messages.get("setAside", [])
            + by_messages.get("client", [])]
    assert any("IPv6 store host" in o for o in seen) and any("V2 record" in o for o in seen)


def test_blank_over_a_record_ends_the_data_cleanly_and_says_what_follows(capsys, tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    truth = [t for t in truth_records("rocketmq-5.3.3") if t["kind"] == "MESSAGE"]
    last = max(t["file"] for t in truth)
    in_last = [t for t in truth if t["file"] == last]
    target = in_last[len(in_last) // 2]
    size = (root / "commitlog" / last).stat().st_size
    with open(root / "commitlog" / last, "r+b") as f:
        f.seek(target["fileOffset"])
        f.write((size - target["fileOffset"]).to_bytes(4, "big") + MAGIC_BLANK.to_bytes(4, "big", signed=True))
    code, info = _inspect(capsys, root)
    end = info["dataEnd"]
    after = [t for t in in_last if t["fileOffset"] > target["fileOffset"]]
    data_end = max(t["fileOffset"] + t["storeSize"] for t in in_last)
    assert code == 0 and end["reason"] == "BLANK_LAST" and end["clean"]
    assert end["commitLogOffset"] == target["commitlogOffset"] and info["messages"] == len(truth) - 1 - len(after)
    assert (end["bytesAfter"], end["recordsAfter"]) == (data_end - target["fileOffset"], len(after))
    assert main(["inspect", str(root)]) == 0
    assert (f"data follows the BLANK record: {data_end - target['fileOffset']:,} bytes, {len(after)} message records"
            in capsys.readouterr().out)
    # A BLANK where the broker writes one (a full segment): nothing follows it.
    _, info = _inspect(capsys, root / "commitlog" / "00000000000000000000")
    assert info["dataEnd"]["reason"] == "BLANK_LAST" and info["dataEnd"]["bytesAfter"] == 0


def test_body_crc_kernel_equals_zlib():
    rng = np.random.default_rng(7)
    buf = rng.integers(0, 256, 1 << 16, dtype=np.uint8)
    for n in (0, 1, 7, 8, 9, 63, 64, 65, 1000, crc.ZLIB_FROM - 1, crc.ZLIB_FROM, 5000):
        for p in (0, 1, 5, 333):
            assert int(crc.crc32(buf, p, n, crc._TABLES)) == zlib.crc32(buf[p:p + n].tobytes())
    lengths = np.array([0, 5, 100, crc.ZLIB_FROM + 10, 8, 3000, 17], np.int64)
    pos = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    stored = np.array([zlib.crc32(buf[p:p + n].tobytes()) & 0x7FFFFFFF for p, n in zip(pos, lengths)], np.int32)
    assert crc.first_body_mismatch(buf, pos, lengths, stored) == -1
    for bad in (1, 3, 5, 6):  # small bodies by the table loop, large ones by zlib: the first bad one either way
        wrong = stored.copy()
        wrong[bad:] ^= 1
        assert crc.first_body_mismatch(buf, pos, lengths, wrong) == bad
    empty = stored.copy()
    empty[0] = 12345  # an empty body is never checked
    assert crc.first_body_mismatch(buf, pos, lengths, empty) == -1


@pytest.mark.parametrize("pieces", [2, 5])
def test_facts_and_sums_of_parts_merged_in_order_equal_one_walk(version, pieces):
    """What ``inspect`` sums (its ``LogTally``: the summary and the release facts), added in parts of
    the walk and merged in order, as worker processes hand them back, equals the sums of the whole walk."""
    from rmqformats.cli.inspect import LogTally

    log = rmqformats.open_store(store_path(version)).commitlog
    batches = list(log.batches(columns=SUMMARY_COLUMNS, decompress=False, batch_size=23))
    whole = LogTally(log.segments)
    for batch in batches:
        whole.add(batch)
    cuts = np.linspace(0, len(batches), pieces + 1).astype(int)
    merged = LogTally(log.segments)
    for lo, hi in zip(cuts, cuts[1:]):
        part = merged.empty()
        for batch in batches[lo:hi]:
            part.add(batch)
        merged.merge(part)

    def result(tally):
        d = Detector()
        d.take(tally.facts)
        s = tally.summary
        return (s.messages, s.per_segment(), s.per_queue(), s.versions(), s.first_timestamp, s.last_timestamp,
                d.result().to_json())
    assert result(merged) == result(whole)
    assert result(whole)[-1] == _evidence_by_messages(log)

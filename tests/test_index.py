"""Index files: headers, lookups and checked lookups against RocketMQ's own results, and bad input."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
import subprocess

import pytest
from kaitaistruct import KaitaiStream

import rmqformats
from rmqformats import index as idx
from rmqformats.errors import IndexChainLoopError, IndexRangeError, IndexSizeError
from rmqformats.generated.construct import rocketmq_index_file as cs
from rmqformats.generated.kaitai.rocketmq_index_file import RocketmqIndexFile
from rmqformats.index import IndexFile, IndexFiles, index_key_hash, infer_counts, lookup
from rmqformats.synth import MessageSpec, write_commitlog
from rmqformats.synth.index import IndexFileBuilder, IndexServiceBuilder, create_sparse

from conftest import FIXTURES, store_path, truth_records

T0 = 1_795_000_000_000  # a store time in ms (November 2026, like the vectors)


def _truth(version: str) -> dict:
    with open(FIXTURES / version / "truth" / "index.json", encoding="utf-8") as f:
        return json.load(f)


def _api_view(version: str) -> dict:
    with open(FIXTURES / version / "truth" / "api_view.json", encoding="utf-8") as f:
        return json.load(f)


def _store_config(version: str) -> dict:
    with open(FIXTURES / version / "store_config.json", encoding="utf-8") as f:
        return json.load(f)


def _split(query: str) -> tuple[str, str]:
    topic, _, key = query.partition("#")
    return topic, key


def _is_rollback(record: dict) -> bool:
    return (record["sysFlag"] >> 2) & 3 == 3


def _digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


# ---------------------------------------------------------------------------
# The real vectors


def test_headers_match_rocketmq(version):
    truth = _truth(version)
    with IndexFiles(store_path(version) / "index") as files:
        assert [f.name for f in files] == [t["file"] for t in truth["files"]]
        for f, t in zip(files, truth["files"]):
            h = f.header
            assert f.size == t["fileSize"]
            assert (h.begin_timestamp, h.end_timestamp, h.end_phy_offset) == \
                (t["beginTimestamp"], t["endTimestamp"], t["endPhyOffset"])
            assert (h.begin_phy_offset, h.hash_slot_count, h.index_count) == \
                (t["header_beginPhyOffset"], t["header_hashSlotCount"], t["header_indexCount"])


def test_inferred_counts_are_the_store_config(version):
    config = _store_config(version)
    with IndexFiles(store_path(version) / "index") as files:
        for f in files:
            assert (f.num_hash_slots, f.num_index) == (config["maxHashSlotNum"], config["maxIndexNum"])
            assert f.size == config["indexFileSize"]


@pytest.mark.parametrize("mapped", [False, True], ids=["pread", "mmap"])
def test_query_offsets_equal_rocketmq_in_order(version, mapped):
    """Every recorded `topic#key` query gives exactly RocketMQ's selectPhyOffset results, in order."""
    queries = _truth(version)["queries_topic#key_to_phyOffsets"]
    assert len(queries) > 600
    config = _store_config(version)["fullMessageStoreConfig"]
    with IndexFiles(store_path(version) / "index", num_hash_slots=config["maxHashSlotNum"],
                    num_index=config["maxIndexNum"], mapped=mapped) as files:
        got = {q: files.query_offsets(*_split(q), max_num=config["maxMsgsNumBatch"]) for q in queries}
    assert got == queries
    assert sum(len(v) > 1 for v in got.values()) >= 12  # chains across entries and files are exercised


def test_checked_lookup_returns_the_messages_carrying_the_key(version):
    """lookup() keeps the index hits whose message has the topic and the key (KEYS or UNIQ_KEY)."""
    records = [r for r in truth_records(version) if r["kind"] == "MESSAGE"]
    by_offset = {r["physicalOffset"]: r for r in records}
    queries = _truth(version)["queries_topic#key_to_phyOffsets"]
    store = rmqformats.open_store(store_path(version))
    checked = 0
    for query, raw in queries.items():
        topic, key = _split(query)
        carrying = {r["physicalOffset"] for r in records if r["topic"] == topic and not _is_rollback(r)
                    and (r.get("uniqKey") == key or key in (r.get("keys") or "").split(" "))}
        hits = lookup(store, topic, key)
        assert [h.commitlog_offset for h in hits] == [o for o in raw if o in carrying]
        assert {h.commitlog_offset for h in hits} == carrying
        for h in hits:
            truth = by_offset[h.commitlog_offset]
            assert h.key_matches is True and h.error is None
            assert (h.message.topic, h.message.uniq_key, h.message.store_timestamp) == \
                (truth["topic"], truth.get("uniqKey"), truth["storeTimestamp"])
            # whole seconds after the file's begin time
            assert 0 <= truth["storeTimestamp"] - h.store_time_approx < 1000
        checked += len(hits)
    assert checked > 600


def test_checked_lookup_equals_the_brokers_query_message(version):
    api = _api_view(version)["queryMessage_phyOffsets"]
    store = rmqformats.open_store(store_path(version))
    for query, offsets in api.items():
        hits = store.lookup(*_split(query))
        assert sorted(h.commitlog_offset for h in hits) == sorted(offsets), query


def test_rollback_records_are_not_indexed(version):
    records = [r for r in truth_records(version) if r["kind"] == "MESSAGE" and _is_rollback(r)]
    assert records
    store = rmqformats.open_store(store_path(version))
    for r in records:
        assert store.lookup(r["topic"], r["uniqKey"]) == []


def test_unchecked_lookup_is_the_raw_result(version):
    queries = _truth(version)["queries_topic#key_to_phyOffsets"]
    store = rmqformats.open_store(store_path(version))
    query = "TopicTest#order-1"
    hits = store.lookup(*_split(query), check_keys=False)
    assert [h.commitlog_offset for h in hits] == queries[query]
    assert all(h.message is None and h.key_matches is None for h in hits)
    assert [h.commitlog_offset for h in store.lookup(*_split(query), max_num=3)] == queries[query][:3]


def test_real_files_rebuild_byte_for_byte_through_construct(version):
    """putKey replayed over the dispatched messages, built through the construct schema, gives the real files."""
    service = IndexServiceBuilder(64, 256)
    for r in truth_records(version):
        if r["kind"] != "MESSAGE":
            continue
        d = r["dispatch"]
        service.put_message(d["topic"], r["physicalOffset"], r["storeTimestamp"],
                            keys=(d.get("keys") or "").split(" "), uniq_key=d.get("uniqKey"),
                            is_rollback=(d["sysFlag"] >> 2) & 3 == 3)
    names = sorted(os.listdir(store_path(version) / "index"))
    assert len(service.files) == len(names) == 3
    for built, name in zip(service.files, names):
        assert built.build() == (store_path(version) / "index" / name).read_bytes(), name


def test_kaitai_and_construct_read_what_the_api_reads(version):
    for path in sorted((store_path(version) / "index").iterdir()):
        data = path.read_bytes()
        k = RocketmqIndexFile(KaitaiStream(io.BytesIO(data)))
        c = cs.rocketmq_index_file.parse(data)
        with IndexFile(path) as f:
            h = f.header
            for parsed in (k.header, c.header):
                assert tuple(getattr(parsed, n) for n in ("begin_timestamp", "end_timestamp", "ofs_begin_physical",
                                              "ofs_end_physical", "num_hash_slots_used", "next_index")) == h
            assert k.num_hash_slots == c.num_hash_slots == f.num_hash_slots
            assert k.num_index == c.num_index == f.num_index
            assert k.is_size_consistent and c.is_size_consistent
            slots = [f.slot(i) for i in range(f.num_hash_slots)]
            assert [s.latest_index for s in k.tables.hash_slots] == slots
            assert [s.latest_index for s in c.tables.hash_slots] == slots
            entries = [f.entry(n)[1:] for n in range(f.num_index)]
            assert [(e.key_hash, e.ofs_physical, e.time_diff, e.prev_index) for e in k.tables.entries] == entries
            assert [(e.key_hash, e.ofs_physical, e.time_diff, e.prev_index) for e in c.tables.entries] == entries
            last = f.entry(h.num_entries)[1:]
            assert (k.last_entry.key_hash, k.last_entry.ofs_physical, k.last_entry.time_diff,
                    k.last_entry.prev_index) == last
            assert (c.last_entry.key_hash, c.last_entry.ofs_physical) == last[:2]


# ---------------------------------------------------------------------------
# Hashing


@pytest.mark.parametrize("key, expected", [
    ("a", 97),
    ("TagA", 2_598_919),
    ("hello world", 1_794_106_052),
    ("TopicTest#KEY1", 1_656_969_516),  # String.hashCode is -1656969516
    ("polygenelubricants", 0),  # String.hashCode is Integer.MIN_VALUE: Math.abs leaves it negative
    ("Aa", 2112), ("BB", 2112),
    ("🚀", 31 * 0xD83D + 0xDE80),  # a non-BMP character is two UTF-16 units
    ("键", 0x952E),
    ("", 0),
])
def test_index_key_hash(key, expected):
    assert index_key_hash(key) == expected


def _java_hash_reference(key: str) -> int:
    """String.hashCode step by step over UTF-16 units, then abs with MIN_VALUE -> 0."""
    data = key.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) % (1 << 32)
    h = h - (1 << 32) if h >= 1 << 31 else h
    return 0 if h == -(1 << 31) else abs(h)


def test_index_key_hash_of_random_keys():
    rng = random.Random(7)
    alphabet = [chr(c) for c in (*range(32, 127), 0xE9, 0x4E2D, 0x952E, 0xFFFF)] + ["🚀", "𝄞"]
    for length in list(range(40)) + [1023, 1024, 1025, 3000]:
        key = "".join(rng.choice(alphabet) for _ in range(length))
        assert index_key_hash(key) == _java_hash_reference(key), key


def test_index_key_hash_of_non_ascii_keys_matches_the_real_entries(version):
    """The vectors index keys such as `TopicTest#键一`; the broker's hash is in their entries."""
    # One message carries these keys: TopicTest in 4.9.7 and 5.1.4, TopicMisc in 5.3.3.
    [(topic, offset)] = [(r["topic"], r["physicalOffset"]) for r in truth_records(version)
                         if r["kind"] == "MESSAGE" and "键一" in (r["keys"] or "").split()]
    with IndexFiles(store_path(version) / "index") as files:
        for key in ("键一", "键二"):
            h = index_key_hash(f"{topic}#{key}")
            found = [f.entry(n) for f in files for n in range(1, f.header.next_index)
                     if f.entry(n).key_hash == h]
            assert len(found) == 1 and found[0].phy_offset == offset
            assert files.query_offsets(topic, key) == [found[0].phy_offset]


# ---------------------------------------------------------------------------
# Synthetic files built like putKey builds them


def _file(tmp_path, builder: IndexFileBuilder, name: str = "20261121000000000"):
    path = tmp_path / name
    builder.write(path)
    return path


def test_keys_sharing_a_slot_walk_the_chain(tmp_path):
    b = IndexFileBuilder(4, 16)
    keys = [k for k in (f"T#k{i}" for i in range(40)) if index_key_hash(k) % 4 == 1][:3]
    assert len({index_key_hash(k) for k in keys}) == 3
    for i, key in enumerate(keys * 2):
        b.put_key(key, 1000 + i, T0 + i * 1000)
    with IndexFile(_file(tmp_path, b)) as f:
        assert f.slot(1) == 6 and [f.entry(n).prev_index for n in range(1, 7)] == [0, 1, 2, 3, 4, 5]
        assert f.header.hash_slot_count == 1  # 4.7.1+: slots used
        assert f.select_phy_offsets(keys[0]) == [1003, 1000]
        assert f.select_phy_offsets(keys[2]) == [1005, 1002]
        assert f.select_phy_offsets(keys[0], max_num=1) == [1003]
        assert f.select_phy_offsets("T#other") == []


def test_legacy_hash_slot_count_counts_every_put(tmp_path):
    b = IndexFileBuilder(4, 16, legacy_slot_count=True)
    for i in range(5):
        b.put_key("T#same", i, T0)
    with IndexFile(_file(tmp_path, b)) as f:
        assert (f.header.hash_slot_count, f.header.num_entries) == (5, 5)


def _name(i: int) -> str:
    return f"2026112100000{i:04d}"


def _synthetic_store(tmp_path, messages, num_hash_slots=8, num_index=32, legacy=False):
    """A store whose commit log holds ``messages`` ((topic, keys, uniq_key, store time)) and an index of them."""
    root = tmp_path / "store"
    specs = [MessageSpec(topic=t, body=b"x", properties={"KEYS": " ".join(keys), "UNIQ_KEY": u} if u
             else {"KEYS": " ".join(keys)}, store_timestamp=ts) for t, keys, u, ts in messages]
    placed = write_commitlog(root / "commitlog", specs, segment_size=1 << 16)
    service = IndexServiceBuilder(num_hash_slots, num_index, legacy_slot_count=legacy)
    for (topic, keys, uniq, ts), p in zip(messages, placed):
        service.put_message(topic, p.commitlog_offset, ts, keys=keys, uniq_key=uniq)
    os.makedirs(root / "index")
    for i, f in enumerate(service.files):
        f.write(root / "index" / _name(i))
    return rmqformats.open_store(root), [p.commitlog_offset for p in placed]


def test_different_keys_with_the_same_hash(tmp_path):
    assert index_key_hash("T#Aa") == index_key_hash("T#BB")
    store, offsets = _synthetic_store(tmp_path, [("T", ["Aa"], None, T0), ("T", ["BB"], None, T0 + 1000),
                                                 ("T", ["Aa"], None, T0 + 2000)])
    with store.index() as files:
        # The broker returns both keys' messages: the index only has hashes.
        assert files.query_offsets("T", "Aa") == files.query_offsets("T", "BB") == offsets[::-1]
    assert [h.commitlog_offset for h in store.lookup("T", "Aa")] == [offsets[2], offsets[0]]
    assert [h.commitlog_offset for h in store.lookup("T", "BB")] == [offsets[1]]
    raw = store.lookup("T", "BB", check_keys=False)
    assert [(h.commitlog_offset, h.message, h.key_matches) for h in raw] == [(o, None, None) for o in offsets[::-1]]


def test_key_of_another_topic_is_not_a_match(tmp_path):
    store, offsets = _synthetic_store(tmp_path, [("A", ["k"], "U1", T0), ("B", ["k"], "U2", T0)])
    assert [h.commitlog_offset for h in store.lookup("A", "k")] == [offsets[0]]
    assert [h.commitlog_offset for h in store.lookup("B", "U2")] == [offsets[1]]
    assert store.lookup("A", "U2") == []


def test_time_range_filtering_and_file_order(tmp_path):
    # 5 entries per file (num_index 6): the key is in every message, spread over three files.
    msgs = [("T", ["k"], None, T0 + i * 10_000) for i in range(12)]
    store, offsets = _synthetic_store(tmp_path, msgs, num_hash_slots=2, num_index=6)
    with store.index(num_hash_slots=2, num_index=6) as files:
        assert len(files) == 3
        assert files.query_offsets("T", "k") == offsets[::-1]
        # [T0+30s, T0+70s]: messages 3..7, newest first, across two files
        assert files.query_offsets("T", "k", begin=T0 + 30_000, end=T0 + 70_000) == offsets[7:2:-1]
        assert files.query_offsets("T", "k", begin=T0 + 200_000) == []
        assert files.query_offsets("T", "k", end=T0 - 1) == []
        assert files.query_offsets("T", "k", max_num=4) == offsets[:-5:-1]
        newest = files.files[-1]
        assert newest.is_time_matched(0, (1 << 63) - 1)
        assert not newest.is_time_matched(0, newest.header.begin_timestamp - 1)
        assert newest.is_time_matched(newest.header.end_timestamp, newest.header.end_timestamp + 1)
    hits = store.lookup("T", "k", begin=T0 + 30_000, end=T0 + 70_000, num_hash_slots=2, num_index=6)
    assert [h.message.store_timestamp for h in hits] == [T0 + i * 10_000 for i in range(7, 2, -1)]
    assert [h.index_file for h in hits] == [_name(1)] * 3 + [_name(0)] * 2


def test_first_entry_of_a_later_file_is_timed_from_the_inherited_begin(tmp_path):
    """A new file starts with the previous file's end time; its first entry's seconds count from there."""
    msgs = [("T", ["k"], None, T0 + i * 10_000) for i in range(7)]
    store, offsets = _synthetic_store(tmp_path, msgs, num_hash_slots=2, num_index=6)
    with store.index(num_hash_slots=2, num_index=6) as files:
        second = files.files[1]
        assert second.header.begin_timestamp == T0 + 50_000
        assert second.entry(1).time_diff == 10  # from T0+40s, the first file's end time
        # so the broker places message 5 (stored at T0+50s) at T0+60s, and misses it here:
        assert files.query_offsets("T", "k", begin=T0 + 45_000, end=T0 + 55_000) == []
        assert files.query_offsets("T", "k", begin=T0 + 45_000, end=T0 + 60_000) == offsets[6:4:-1]
    assert store.lookup("T", "k", begin=T0 + 60_000, end=T0 + 60_000, num_index=6)[0].store_time_approx == T0 + 60_000


def test_time_is_whole_seconds_after_the_begin_time(tmp_path):
    b = IndexFileBuilder(2, 8)
    b.put_key("T#k", 10, T0 + 999)  # first entry: time_diff 0, begin becomes T0+999
    b.put_key("T#k", 20, T0 + 2_998)  # 1.999 s later: time_diff 1
    with IndexFile(_file(tmp_path, b)) as f:
        assert [f.entry(n).time_diff for n in (1, 2)] == [0, 1]
        assert f.entry(2).time_ms(f.header.begin_timestamp) == T0 + 1_999
        # the lookup sees the entry at T0+1999, so a range starting at its real time misses it
        assert f.select_phy_offsets("T#k", 64, T0 + 1_999, T0 + 1_999) == [20]
        assert f.select_phy_offsets("T#k", 64, T0 + 2_998, T0 + 5_000) == []


def test_integer_min_value_hash_goes_to_slot_zero(tmp_path):
    b = IndexFileBuilder(8, 32)
    b.put_key("polygenelubricants", 77, T0)
    with IndexFile(_file(tmp_path, b)) as f:
        assert f.slot(0) == 1 and f.entry(1).key_hash == 0
        assert f.select_phy_offsets("polygenelubricants") == [77]


def test_empty_and_zero_filled_files(tmp_path):
    empty = _file(tmp_path, IndexFileBuilder(64, 256), "empty")
    zero = tmp_path / "zero"
    zero.write_bytes(bytes(5416))
    for path in (empty, zero):
        with IndexFile(path) as f:
            assert f.header.next_index == 1 and f.header.num_entries == 0
            assert f.select_phy_offsets("TopicTest#key-1") == []
    with IndexFile(zero) as f:
        assert f.header.index_count == 0  # stored 0, read as 1 like IndexHeader.load


def test_explicit_and_inferred_counts(tmp_path):
    path = store_path("rocketmq-4.9.7") / "index" / "20261121095322454"
    for kw in ({}, {"num_hash_slots": 64}, {"num_index": 256}, {"num_hash_slots": 64, "num_index": 256}):
        with IndexFile(path, **kw) as f:
            assert (f.num_hash_slots, f.num_index) == (64, 256)
    assert infer_counts(420_000_040) == (5_000_000, 20_000_000)
    assert infer_counts(40 + 84 * 1000) == (1000, 4000)
    # another ratio: only explicit counts work
    odd = _file(tmp_path, IndexFileBuilder(10, 7), "odd")
    with pytest.raises(IndexSizeError, match="pass the broker's maxHashSlotNum") as info:
        IndexFile(odd)
    # The pairs that fit the 180 bytes are listed (all eight: few fit so small a file), and how to give them.
    assert "these 40 slots and 1 entry, 35 slots and 2 entries" in info.value.reason
    assert "10 slots and 7 entries, 5 slots and 8 entries fit it" in info.value.reason
    assert "--hash-slots and --index-num" in info.value.reason
    assert info.value.path == str(odd)
    with IndexFile(odd, num_hash_slots=10) as f:
        assert f.num_index == 7
    with IndexFile(odd, num_index=7) as f:
        assert f.num_hash_slots == 10


@pytest.mark.parametrize("kw, message", [
    ({"num_hash_slots": 64, "num_index": 255}, "longer than the 5396"),
    ({"num_hash_slots": 65, "num_index": 256}, "shorter than the 5420"),
    ({"num_hash_slots": 63}, "does not fit 63 hash slots"),
    ({"num_index": 300}, "does not fit 300 entries"),
    ({"num_hash_slots": 0}, "must be an int from 1"),
    ({"num_index": -5}, "must be an int from 1"),
    ({"num_hash_slots": 1 << 40}, "must be an int from 1"),
    ({"num_hash_slots": True}, "must be an int from 1"),
])
def test_wrong_or_hostile_counts(kw, message):
    path = store_path("rocketmq-5.1.4") / "index" / "20261121095342764"
    with pytest.raises(IndexSizeError, match=message) as info:
        IndexFile(path, **kw)
    assert str(info.value).startswith("index/20261121095342764")


def _copy_index(tmp_path, version="rocketmq-4.9.7", name="20261121095322493"):
    dst = tmp_path / "index" / name
    dst.parent.mkdir(exist_ok=True)
    shutil.copy(store_path(version) / "index" / name, dst)
    return dst


@pytest.mark.parametrize("size", [0, 1, 39])
def test_file_shorter_than_the_header(tmp_path, size):
    path = _copy_index(tmp_path)
    os.truncate(path, size)
    with pytest.raises(IndexSizeError, match="less than the 40-byte header") as info:
        IndexFile(path)
    assert info.value.offset == 0


def test_truncated_file(tmp_path):
    path = _copy_index(tmp_path)
    os.truncate(path, 5000)
    with pytest.raises(IndexSizeError, match="cannot infer"):
        IndexFile(path)
    with pytest.raises(IndexSizeError, match="shorter than the 5416") as info:
        IndexFile(path, num_hash_slots=64, num_index=256)
    assert info.value.offset == 5000 and "index/20261121095322493 @ 0x1388" in str(info.value)
    with pytest.raises(IndexSizeError):
        IndexFiles(path.parent)


def test_file_cut_after_it_was_opened(tmp_path):
    path = _copy_index(tmp_path)
    with IndexFile(path) as f:
        os.truncate(path, 1000)
        with pytest.raises(IndexSizeError, match="file ends 0 bytes into a 20-byte read") as info:
            f.entry(200)
        assert info.value.offset == 40 + 4 * 64 + 20 * 200
        with pytest.raises(IndexSizeError, match="it was 5416 bytes when opened"):
            f.select_phy_offsets("TopicTest#key-119")


def _patched(tmp_path, changes, **builder):
    """A synthetic file with some slot or entry fields overwritten (``(kind, number, field, value)``)."""
    b = IndexFileBuilder(4, 16, **builder)
    for i in range(6):
        b.put_key("T#k", 100 + i, T0 + i * 1000)  # one chain: 6 -> 5 -> ... -> 1
    data = bytearray(b.build())
    for kind, number, field, value in changes:
        if kind == "slot":
            data[40 + 4 * number:44 + 4 * number] = cs.hash_slot.build({"latest_index": value})
        else:
            at = 40 + 4 * 4 + 20 * number
            entry = dict(cs.entry.parse(bytes(data[at:at + 20])))
            entry[field] = value
            data[at:at + 20] = cs.entry.build(entry)
    path = tmp_path / "patched"
    path.write_bytes(bytes(data))
    return path, index_key_hash("T#k") % 4


def test_slot_value_out_of_range(tmp_path):
    slot = index_key_hash("T#k") % 4
    for value in (-1, 0, 8, 1 << 30):  # below 1 or above indexCount (7): the broker sees an empty slot
        path, _ = _patched(tmp_path, [("slot", slot, None, value)])
        with IndexFile(path) as f:
            assert f.select_phy_offsets("T#k") == []
    # indexCount raised to the file's entry count: a slot may then name an entry past the end
    path, _ = _patched(tmp_path, [("slot", slot, None, 16)])
    data = bytearray(path.read_bytes())
    data[36:40] = (16).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    before = _digest(path)
    with IndexFile(path) as f:
        with pytest.raises(IndexRangeError, match="entry number 16 is past the last entry") as info:
            f.select_phy_offsets("T#k")
        assert info.value.offset == 40 + 4 * slot
        assert f.select_phy_offsets("T#k", strict=False) == []
    assert _digest(path) == before


def test_prev_index_stop_rules(tmp_path):
    everything = [105, 104, 103, 102, 101, 100]
    assert _select(tmp_path, []) == everything
    for value in (0, -3, 8, 4):
        # entry 4's link changed: 0, negative, above indexCount (7) or to itself ends the walk
        assert _select(tmp_path, [("entry", 4, "prev_index", value)]) == everything[:3], value
    # a negative time ends the walk before entry 5 counts
    assert _select(tmp_path, [("entry", 5, "time_diff", -1)]) == everything[:1]


def _select(tmp_path, changes) -> list[int]:
    path, _ = _patched(tmp_path, changes)
    with IndexFile(path) as f:
        return f.select_phy_offsets("T#k")


def test_entry_seven_is_read_like_the_broker_reads_it(tmp_path):
    # A link to entry 7 == indexCount is followed (the broker checks "> indexCount"): zeros, hash 0.
    path, _ = _patched(tmp_path, [("entry", 4, "prev_index", 7)])
    with IndexFile(path) as f:
        assert f.select_phy_offsets("T#k") == [105, 104, 103]
        assert f.entry(7) == (7, 0, 0, 0, 0)


def test_prev_index_loops(tmp_path):
    # 6 -> 5 -> 4 -> 6 ...: entries of another key loop forever in the broker; here a typed error.
    path, _ = _patched(tmp_path, [("entry", 4, "prev_index", 6)] +
                       [("entry", n, "key_hash", 12345) for n in (4, 5, 6)])
    with IndexFile(path) as f:
        with pytest.raises(IndexChainLoopError, match="loops back") as info:
            f.select_phy_offsets("T#k")
        assert info.value.path == str(path) and info.value.offset is not None
        assert f.select_phy_offsets("T#k", strict=False) == []
    # With hits in the loop the broker stops at maxNum, returning repeats; so does the API.
    path, _ = _patched(tmp_path, [("entry", 4, "prev_index", 6)])
    with IndexFile(path) as f:
        assert f.select_phy_offsets("T#k", max_num=7) == [105, 104, 103, 105, 104, 103, 105]


def test_slot_and_entry_numbers_out_of_range(tmp_path):
    with IndexFile(store_path("rocketmq-5.1.4") / "index" / "20261121095342764") as f:
        for bad in (-1, 64):
            with pytest.raises(IndexRangeError, match=f"slot {bad} is outside 0..63"):
                f.slot(bad)
        for bad in (-1, 256):
            with pytest.raises(IndexRangeError, match=f"entry {bad} is outside 0..255"):
                f.entry(bad)
        assert f.entry(0) == (0, 0, 0, 0, 0)  # never written


def test_lookup_reports_hits_whose_message_is_gone(store_copy, version):
    raw = _truth(version)["queries_topic#key_to_phyOffsets"]["TopicTest#order-0"]
    os.remove(store_copy / "commitlog" / "00000000000000000000")
    store = rmqformats.open_store(store_copy)
    hits = store.lookup("TopicTest", "order-0")
    assert [h.commitlog_offset for h in hits] == raw
    assert all(h.message is None and h.key_matches is None and "in no segment file" in h.error for h in hits)


def test_lookup_reports_hits_whose_bytes_are_not_a_message(store_copy, version):
    raw = _truth(version)["queries_topic#key_to_phyOffsets"]["TopicTest#order-1"]
    seg = store_copy / "commitlog" / "00000000000000000000"
    with open(seg, "r+b") as f:
        f.seek(raw[0])
        f.write(b"\xff" * 8)
    hits = rmqformats.open_store(store_copy).lookup("TopicTest", "order-1")
    assert [h.commitlog_offset for h in hits] == raw
    assert hits[0].message is None and "no message starts here" in hits[0].error
    assert all(h.key_matches for h in hits[1:])


# ---------------------------------------------------------------------------
# Only the pages a lookup needs


def test_lookup_in_a_full_size_file_reads_a_few_bytes(tmp_path, monkeypatch):
    """A default-size (420 MB, sparse) file: opening it and a lookup read the header, one slot and the chain."""
    path = tmp_path / "20261121000000000"
    with create_sparse(path, 5_000_000, 20_000_000) as sink:
        b = IndexFileBuilder(5_000_000, 20_000_000, sink=sink)
        for i in range(50):
            b.put_key(f"TopicTest#key-{i % 10}", 1000 * i, T0 + i * 1000)
        b.finish()
    assert os.path.getsize(path) == 420_000_040

    log: list = []

    def counting_pread(fd, n, offset):
        log.append((offset, n))
        return os.pread(fd, n, offset)

    # Every byte the reader takes from the file goes through this one function.
    monkeypatch.setattr(idx, "_pread", counting_pread)
    with IndexFile(path) as f:
        assert (f.num_hash_slots, f.num_index) == (5_000_000, 20_000_000)
        assert f.select_phy_offsets("TopicTest#key-3") == [1000 * i for i in range(43, -1, -10)]
        assert f.select_phy_offsets("TopicTest#missing") == []
    assert sum(n for _, n in log) == 40 + 2 * 4 + 5 * 20
    assert len(log) == 1 + 2 + 5
    assert all(offset + n <= 420_000_040 for offset, n in log)


# ---------------------------------------------------------------------------
# What the Kaitai Web IDE shows


def test_javascript_parser_opens_a_real_file_lazily(tmp_path):
    """The Web IDE's JavaScript parser reads the header and reaches the last entry without the tables."""
    from rmqformats.codegen.__main__ import REPO, compile_ksy

    ksc = REPO / "tools" / "ksc"
    compile_ksy("javascript", [REPO / "formats" / "rocketmq_index_file.ksy"], tmp_path, ksc)
    path = store_path("rocketmq-5.1.4") / "index" / "20261121095342807"
    script = f"""
        const KaitaiStream = require('kaitai-struct/KaitaiStream');
        const R = require({str(tmp_path / 'RocketmqIndexFile.js')!r}).RocketmqIndexFile;
        const r = new R(new KaitaiStream(require('fs').readFileSync({str(path)!r})));
        const before = r._m_tables === undefined;
        console.log(JSON.stringify([before, r.header.nextIndex, r.numHashSlots, r.numIndex,
            r.isSizeConsistent, r.lastEntry.ofsPhysical, r.tables.entries.length]));
    """
    env = {"NODE_PATH": str(ksc / "node_modules"), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    proc = subprocess.run(["node", "-e", script], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    with IndexFile(path) as f:
        last = f.entry(f.header.num_entries)
        expected = [True, f.header.index_count, 64, 256, True, last.phy_offset, 256]
    assert json.loads(proc.stdout) == expected

"""Tiered storage: segments and index files built from the vector stores give back their messages and key lookups.

No tiered-store build is available here: the files are made through the
construct schemas by :func:`layoutstores.tiered_store` from the vector
stores' own records and consume queues.
"""

from __future__ import annotations

import json
import os

import pytest

import rmqformats
from rmqformats.errors import ConfigSyntaxError, TieredIndexError
from rmqformats.tiered import TieredIndexFile, TieredStore, key_hash
from rmqformats.tiered.index import HEADER_SIZE, ITEM_SIZE, SLOT_SIZE
from rmqformats.cli import main

from conftest import FIXTURES, store_path, truth_records
from layoutstores import tiered_store
from test_store_readonly import _snapshot


@pytest.fixture
def tiered(tmp_path, version):
    root, base, moved = tiered_store(version, tmp_path)
    return version, root, base, moved


def test_segments_give_back_the_queues_messages(tiered):
    version, root, base, moved = tiered
    plain = rmqformats.open_store(store_path(version))
    truth = {t["commitlogOffset"]: t for t in truth_records(version) if t["kind"] == "MESSAGE"}
    ts = TieredStore(base, root=root)
    queues = ts.queues()
    assert {(q.topic, q.queue_id) for q in queues} == {
        (q.topic, q.queue_id) for q in plain.queues()
        if any(not u.is_placeholder for u in plain.consume_queue(q.topic, q.queue_id).units())}
    total = 0
    for q in queues:
        log = q.commitlog()
        scan = log.scan(verify_crc=False)
        msgs = list(scan)
        assert scan.end.reason is rmqformats.EndReason.END_OF_FILE
        assert len(scan.blanks) == len(log.segments) - 1  # every sealed file ends with its coda
        cq = q.consume_queue()
        units = list(cq.units())
        assert len(units) == len(msgs)
        for u, m in zip(units, msgs):
            assert m.physical_offset == m.commitlog_offset == u.commitlog_offset
            t = truth[moved[(q.topic, q.queue_id, u.commitlog_offset)]]
            # Every field as RocketMQ decoded it, but the offset the upload rewrote.
            assert (m.topic, m.queue_offset, m.body_raw, m.properties_raw, m.store_timestamp, m.body_crc) == \
                (t["topic"], t["queueOffset"], __import__("base64").b64decode(t["bodyRawBase64"]),
                 t["propertiesString"], t["storeTimestamp"], t["bodyCRC"])
            assert m.body_crc_ok
            assert cq.message(u) == m
        plain_units = [u for u in plain.consume_queue(q.topic, q.queue_id).units() if not u.is_placeholder]
        assert [u.queue_offset for u in units] == [u.cq_offset for u in plain_units]
        assert cq.max_offset == plain.consume_queue(q.topic, q.queue_id).max_offset
        total += len(msgs)
    assert total == sum(1 for _ in moved)


@pytest.mark.parametrize("legacy", [False, True], ids=["5.2+", "5.1.x"])
def test_key_lookups_match_the_brokers_query(tmp_path, version, legacy):
    """Both forms of the index file find, for every topic#key the broker's queryMessage answered, the same messages."""
    root, base, moved = tiered_store(version, tmp_path, legacy=legacy)
    ts = TieredStore(base, root=root)
    files = ts.index_files()
    assert sorted(f.compacted for f in files) == ([False, True, True] if legacy else [False, True])
    assert all(f.legacy == legacy for f in files)
    tiered_topics = {q.topic for q in ts.queues()}
    query = json.load(open(FIXTURES / version / "truth" / "api_view.json"))["queryMessage_phyOffsets"]
    checked = 0
    uploaded = set(moved.values())
    for name, offsets in query.items():
        topic, key = name.split("#", 1)
        # The plugin uploads what the consume queues hold: transaction PREPARED records are indexed, never queued.
        offsets = set(offsets) & uploaded
        if topic not in tiered_topics or not offsets or len(offsets) >= 32:
            continue
        for f in files:
            found = set()
            ids = {v: k for k, v in ts.topic_ids().items()}
            for item in f.lookup(topic, key, topic_id=ids[topic]):
                msg = ts.queue(topic, item.queue_id).commitlog().read(item.commitlog_offset)
                if key in msg.keys or msg.uniq_key == key:
                    found.add(moved[(topic, item.queue_id, item.commitlog_offset)])
            assert found == set(offsets), name
        hits = ts.lookup(topic, key)
        # Each message once, though the index is there in two forms (three for 5.1.x), as queryAsync keys
        # its results by queue id and offset.
        assert sorted(moved[(topic, h.message.queue_id, h.message.commitlog_offset)] for h in hits) == \
            sorted(offsets)
        checked += 1
    assert checked > 20


def test_key_hash_follows_indexstorefile():
    assert key_hash("TopicTest", "key-1") >= 0
    # "polygenelubricants".hashCode() == Integer.MIN_VALUE: negation leaves it negative, as in Java.
    from rmqformats.javahash import java_string_hash
    assert java_string_hash("polygenelubricants") == -(1 << 31)


def _rewrite(path, offset, value: bytes):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(value)


@pytest.mark.parametrize("version", ["rocketmq-5.1.4"])
def test_hostile_counts_give_typed_errors(tmp_path, version):
    root, base, moved = tiered_store(version, tmp_path)
    writing = root / "tiered_index_file" / sorted(os.listdir(root / "tiered_index_file"))[0]
    compacted = next((root / "tiered_index_file" / "compacting").iterdir())
    good = TieredIndexFile(writing)
    assert not good.compacted and (good.num_hash_slots, good.num_items) == (256, 1024)

    # An item count past what the file holds.
    _rewrite(writing, 24, (10 ** 9).to_bytes(4, "big"))
    with pytest.raises(TieredIndexError) as err:
        TieredIndexFile(writing, num_hash_slots=256, num_items=1024)
    assert err.value.path == str(writing) and err.value.offset == 24
    _rewrite(writing, 24, good.header.num_items.to_bytes(4, "big"))

    # A slot naming an item past the item count.
    h = key_hash("TopicTest", "key-1")
    slot_pos = HEADER_SIZE + (h % 256) * SLOT_SIZE
    _rewrite(writing, slot_pos, (good.header.num_items + 5).to_bytes(4, "big"))
    assert TieredIndexFile(writing, num_hash_slots=256, num_items=1024).lookup("TopicTest", "key-1") == []
    # A chain that loops: an item whose link names itself.
    _rewrite(writing, slot_pos, (1).to_bytes(4, "big"))
    item1 = HEADER_SIZE + 256 * SLOT_SIZE + 1 * ITEM_SIZE
    _rewrite(writing, item1 + 28, (1).to_bytes(4, "big"))
    with pytest.raises(TieredIndexError) as err:
        list(TieredIndexFile(writing, num_hash_slots=256, num_items=1024).items_for_hash(h))
    assert "comes back" in err.value.reason and err.value.path == str(writing)

    # Compacted form: a slot's run past the end of the file, and a negative item count.
    _rewrite(compacted, slot_pos, (os.path.getsize(compacted) - 4).to_bytes(4, "big"))
    _rewrite(compacted, slot_pos + 4, (56).to_bytes(4, "big"))
    with pytest.raises(TieredIndexError) as err:
        TieredIndexFile(compacted, compacted=True).lookup("TopicTest", "key-1")
    assert err.value.path == str(compacted) and err.value.offset == os.path.getsize(compacted) - 4
    _rewrite(compacted, 24, (-7).to_bytes(4, "big", signed=True))
    with pytest.raises(TieredIndexError) as err:
        TieredIndexFile(compacted, compacted=True)
    assert err.value.offset == 20
    # A file shorter than its header, and one with a bad magic.
    short = tmp_path / "short"
    short.write_bytes(b"\xbc\xc5\x02\x89" + bytes(10))
    with pytest.raises(TieredIndexError):
        TieredIndexFile(short)
    _rewrite(writing, 0, b"\0\0\0\0")
    with pytest.raises(TieredIndexError) as err:
        TieredIndexFile(writing)
    assert "bad magic" in str(err.value) and err.value.offset == 0


def test_damaged_metadata_is_a_typed_error(tmp_path):
    root, base, _ = tiered_store("rocketmq-4.9.7", tmp_path)
    path = root / "config" / "tieredStoreMetadata.json"
    path.write_text('{"topicMetadataTable": {"T": {"topicId": 1,')
    with pytest.raises(ConfigSyntaxError) as err:
        TieredStore(base, root=root).topic_ids()
    assert err.value.path == str(path)


def test_store_facade_and_inspect(tiered, capsys):
    version, root, base, moved = tiered
    before = _snapshot(tiered[1].parent)
    store = rmqformats.open_store(store_path(version))
    assert store.tiered(str(base)).queues()
    assert main(["inspect", str(store_path(version)), "--tiered", str(base), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["layouts"]["tiered"]["queues"] == len(TieredStore(base).queues())
    assert _snapshot(tiered[1].parent) == before


def test_tiered_command(tiered, capsys):
    version, root, base, moved = tiered
    before = _snapshot(base.parent)
    assert main(["tiered", str(base), "--store", str(root), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sum(r["messages"] for r in rows) == len(moved)
    assert main(["tiered", str(base), "--topic", "TopicTest", "--queue", "1", "--format", "jsonl"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(out) == TieredStore(base).queue("TopicTest", 1).consume_queue().max_offset - \
        TieredStore(base).queue("TopicTest", 1).consume_queue().min_offset
    assert main(["tiered", str(base), "--store", str(root), "--topic", "TopicTest", "--key", "key-1",
                 "--format", "jsonl"]) == 0
    hits = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert hits and all("key-1" in h["properties"]["KEYS"].split(" ") for h in hits)
    assert len({(h["queueId"], h["commitLogOffset"]) for h in hits}) == len(hits)
    # key-5 is one message, indexed in the writing file and in its compacted copy: listed once.
    assert main(["tiered", str(base), "--store", str(root), "--topic", "TopicTest", "--key", "key-5"]) == 0
    rows = capsys.readouterr().out.splitlines()
    truth = [r for r in truth_records(version) if r["kind"] == "MESSAGE" and r["topic"] == "TopicTest"
             and "key-5" in (r["keys"] or "").split(" ")]
    assert len(truth) == 1 and len(rows) == 2 and rows[1].split()[1:4] == ["TopicTest", str(truth[0]["queueId"]),
                                                                          str(truth[0]["queueOffset"])]
    files = TieredStore(base, root=root).query_files()
    assert len(files) == 1 and not files[0].compacted  # the writing form; compacting/ holds its copy
    assert main(["tiered", str(base)]) == 0
    capsys.readouterr()
    assert _snapshot(base.parent) == before


@pytest.mark.parametrize("fmt", ["jsonl", "table"])
def test_tiered_topic_listing_is_the_messages_as_objects_show_them(tiered, capsys, fmt):
    """``tiered --topic`` lists a queue's messages from the walk's batches: the same text as the message
    objects give, line for line (each queue its own table)."""
    import io

    from rmqformats.cli.layouts import _write_log, _write_messages
    version, root, base, moved = tiered
    queues = [q for q in TieredStore(base).queues() if q.topic == "TopicTest"]
    assert len(queues) > 1
    expected = io.StringIO()
    for q in queues:
        scan = q.commitlog().scan()
        _write_messages(scan, fmt, expected)
        assert _write_log(q.commitlog(), fmt, io.StringIO()) == scan.end
    assert main(["tiered", str(base), "--topic", "TopicTest", "--format", fmt]) == 0
    out = capsys.readouterr().out
    headers = len(queues) if fmt == "table" else 0
    assert out == expected.getvalue() and out.count("\n") == headers + sum(
        q.consume_queue().max_offset - q.consume_queue().min_offset for q in queues)


def test_store_commands_on_the_tiered_folder_say_what_reads_it(tiered, capsys):
    version, root, base, moved = tiered
    assert main(["messages", str(base)]) == 2
    assert "rmqformats tiered" in capsys.readouterr().err


def _object_rows(msgs):
    return [(m.commitlog_offset, m.topic, m.queue_id, m.queue_offset, m.store_timestamp, m.properties_raw,
             m.decompressed_body(), m.msg_id, m.tags, m.keys, m.uniq_key) for m in msgs]


def _batch_rows(table):
    cols = ("commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "propertiesString", "body",
            "msgId", "tags", "keys", "uniqKey")
    return list(zip(*((table.column(c).cast("int64") if c == "storeTimestamp" else table.column(c)).to_pylist()
                      for c in cols)))


def test_batches_are_the_walks_columns_file_after_file(tiered):
    """A tiered commit log's record batches are the walk's, file after file: the same rows, end and BLANK codas
    as its object scan, with filters, a start and a stop applied as on a plain log."""
    version, root, base, moved = tiered
    checked = 0
    for q in TieredStore(base, root=root).queues():
        log = q.commitlog()
        scan = log.scan()
        msgs = list(scan)
        batches = log.batches()
        table = batches.read_all()
        assert _batch_rows(table) == _object_rows(msgs)
        assert batches.end == scan.end and batches.blanks == scan.blanks
        assert batches.bytes_done == sum(s.size for s in log.segments)
        if len(msgs) > 2:
            mid = msgs[len(msgs) // 2]
            got = log.batches(start=mid.commitlog_offset, stop=msgs[-1].commitlog_offset).read_all()
            assert _batch_rows(got) == _object_rows([m for m in msgs if mid.commitlog_offset <= m.commitlog_offset
                                                     < msgs[-1].commitlog_offset])
            got = log.to_arrow(tag=mid.tags, since=mid.store_timestamp)
            assert _batch_rows(got) == _object_rows([m for m in msgs if m.tags == mid.tags
                                                     and m.store_timestamp >= mid.store_timestamp])
            checked += 1
    assert checked > 0
    with pytest.raises(rmqformats.RmqFormatError, match="salvage does not apply to a tiered commit log"):
        log.batches(salvage=True)

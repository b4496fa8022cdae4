"""Compaction logs and queues (5.1.0+) built from the vector stores read back as the kept messages.

The compaction files are made through the construct schemas by
:func:`layoutstores.compaction_store` from the vector stores' own records.
The 5.1.4 and 5.3.3 vectors' own ``compaction/position-checkpoint`` (empty,
written by the broker) are read as they are.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import rmqformats
from rmqformats.compaction import read_position_checkpoint
from rmqformats.errors import ConfigSchemaError, ConfigSyntaxError
from rmqformats.cli import main

from conftest import store_path
from layoutstores import compaction_store
from test_store_readonly import _snapshot


@pytest.mark.parametrize("version", ["rocketmq-5.1.4", "rocketmq-5.3.3"])
def test_the_vectors_position_checkpoint(version):
    assert rmqformats.open_store(store_path(version)).compaction().position_checkpoint() == {}
    assert rmqformats.open_store(store_path(version)).compaction().queues() == []


def test_compaction_log_and_queue(tmp_path, version):
    root, kept, placed = compaction_store(version, tmp_path / "store")
    comp = rmqformats.open_store(root).compaction()
    queues = comp.queues()
    assert [(q.topic, q.queue_id, q.sub_folder) for q in queues] == [("TopicTest", 0, "")]
    q = queues[0]
    log = q.commitlog()
    scan = log.scan()
    msgs = list(scan)
    assert scan.end.reason is rmqformats.EndReason.ZERO_TAIL
    assert len(log.segments) > 1 and len(scan.blanks) == len(log.segments) - 1
    assert [(m.commitlog_offset, m.queue_offset) for m in msgs] == placed
    assert [(m.topic, m.queue_offset, m.body_raw, m.properties_raw) for m in msgs] == \
        [(m.topic, m.queue_offset, m.body_raw, m.properties_raw) for m in kept]
    assert all(m.physical_offset == m.commitlog_offset and m.body_crc_ok for m in msgs)
    got = [(u.message.queue_offset, u.message.body_raw) for u in q.messages()]
    assert got == [(m.queue_offset, m.body_raw) for m in kept]
    assert q.consume_queue().check() == []
    assert comp.position_checkpoint() == {"TopicTest_0": rmqformats.open_store(root).consume_queue("TopicTest", 0).max_offset}


def test_damaged_position_checkpoint(tmp_path):
    path = tmp_path / "position-checkpoint"
    path.write_text('{"queueOffsetMap":{"T_0":')
    with pytest.raises(ConfigSyntaxError) as err:
        read_position_checkpoint(str(path))
    assert err.value.path == str(path)
    path.write_text('{"queueOffsetMap":{"T_0":"x"}}')
    with pytest.raises(ConfigSchemaError):
        read_position_checkpoint(str(path))


def test_inspect_shows_compaction_and_changes_nothing(tmp_path, capsys):
    root, kept, placed = compaction_store("rocketmq-5.1.4", tmp_path / "store")
    before = _snapshot(root)
    assert main(["inspect", str(root), "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    comp = info["layouts"]["compaction"]
    assert comp["queues"][0]["topic"] == "TopicTest" and comp["queues"][0]["messages"] == len(kept)
    assert main(["compaction", str(root), "--topic", "TopicTest", "--queue", "0", "--format", "jsonl"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(kept)
    assert main(["compaction", str(root), "--format", "jsonl"]) == 0
    (row,) = map(json.loads, capsys.readouterr().out.splitlines())
    assert (row["topic"], row["queueId"], row["messages"]) == ("TopicTest", 0, len(kept))
    assert _snapshot(root) == before


def test_a_compaction_under_way(tmp_path):
    """compacting/ sub-folders are listed apart from the current log and queue."""
    from rmqformats.synth.compaction import write_compaction
    root, kept, placed = compaction_store("rocketmq-4.9.7", tmp_path / "store")
    records = []
    for m in kept[:3]:
        with open(m.segment, "rb") as f:
            f.seek(m.file_offset)
            records.append(f.read(m.store_size))
    write_compaction(root, "TopicTest", 0, records, log_file_size=2048, cq_units_per_file=64, sub_folder="compacting")
    queues = rmqformats.open_store(root).compaction().queues()
    assert [(q.topic, q.sub_folder) for q in queues] == [("TopicTest", ""), ("TopicTest", "compacting")]
    assert [u.message.body_raw for u in queues[1].messages()] == [m.body_raw for m in kept[:3]]
    assert [u.message.body_raw for u in queues[0].messages()] == [m.body_raw for m in kept]


def _listings(root, fmt):
    """``compaction --topic`` of each queue of ``root``, as the batch road writes it and as the message
    objects write it: (text, error) each."""
    import io

    from rmqformats.cli.layouts import _queue_pieces, _write_messages, _write_pieces
    from rmqformats.export import JSONL_COLUMNS, MESSAGE_TABLE_SOURCE
    out = []
    for q in rmqformats.open_store(root).compaction().queues():
        done = []
        for write in ("pieces", "objects"):
            buf, error = io.StringIO(), None
            try:
                if write == "pieces":
                    _write_pieces(_queue_pieces(q.consume_queue(), q.commitlog(),
                                                JSONL_COLUMNS if fmt == "jsonl" else MESSAGE_TABLE_SOURCE), fmt, buf)
                else:
                    _write_messages((u.message for u in q.messages()), fmt, buf)
            except rmqformats.RmqFormatError as exc:
                error = (type(exc), str(exc))
            done.append((buf.getvalue(), error))
        out.append(done)
    return out


def _unit_at(root, k: int) -> tuple[Path, int]:
    cq = rmqformats.open_store(root).compaction().queues()[0].consume_queue()
    return tuple(map(Path, cq.location(k)[:1])) + (cq.location(k)[1],)


@pytest.mark.parametrize("fmt", ["jsonl", "table"])
@pytest.mark.parametrize("damage", [None, "offset", "size", "base", "batch", "cut", "zero"])
def test_compaction_topic_listing_is_the_message_objects(tmp_path, fmt, damage):
    """``compaction --topic`` lists a queue's kept messages from its log's batches: the same text as the
    message objects give, and where a unit does not agree with its record (or points past the log), the
    same messages before it and the same error."""
    import struct

    from rmqformats.batch_consumequeue import UNIT_DTYPE
    root, kept, placed = compaction_store("rocketmq-5.3.3", tmp_path / "store", log_file_size=4096,
                                          cq_units_per_file=1000)
    assert len(kept) > 20
    k = len(kept) // 2
    path, pos = _unit_at(root, k)
    fields = {name: UNIT_DTYPE.fields[name][1] for name in UNIT_DTYPE.names}
    ofs, size, _, _, base, num, *_ = UNIT_DTYPE.names
    with open(path, "r+b") as f:
        f.seek(pos)
        unit = bytearray(f.read(UNIT_DTYPE.itemsize))
        if damage == "offset":  # the next record's place
            unit[fields[ofs]:fields[ofs] + 8] = struct.pack(">q", placed[k + 1][0])
        elif damage == "size":
            unit[fields[size]:fields[size] + 4] = struct.pack(">i", kept[k].store_size + 1)
        elif damage == "base":
            unit[fields[base]:fields[base] + 8] = struct.pack(">q", placed[k][1] + 1000)
        elif damage == "batch":
            unit[fields[num]:fields[num] + 2] = struct.pack(">h", 2)
        f.seek(pos)
        f.write(unit)
    log = root / "compaction" / "compactionLog" / "TopicTest" / "0"
    segment = sorted(log.iterdir())[-1]
    if damage == "cut":  # the last file of the log cut short: its last units point past it
        os.truncate(segment, 100)
    elif damage == "zero":
        with open(segment, "r+b") as f:
            f.write(bytes(64))
    (pieces, objects), = _listings(root, fmt)
    assert pieces == objects
    if damage is None:
        assert objects[1] is None and objects[0].count("\n") == len(kept) + (fmt == "table")
        from rmqformats.cli.layouts import _queue_pieces
        q = rmqformats.open_store(root).compaction().queues()[0]
        pieces = list(_queue_pieces(q.consume_queue(), q.commitlog(), ["commitLogOffset"]))
        assert all(hasattr(p, "schema") for p in pieces)  # the walk's batches alone
        assert sum(p.num_rows for p in pieces) == len(kept)
    elif damage == "base":  # past the queue's end: the listing ends there
        assert objects[1] is None and objects[0].count("\n") == k + (fmt == "table")
    elif damage != "batch":
        assert objects[1] is not None


@pytest.mark.parametrize("fmt", ["jsonl", "table"])
@pytest.mark.parametrize("bad", [None, 1500, 2499])
def test_a_long_compaction_queue_listed_as_the_objects_list_it(tmp_path, fmt, bad):
    """2,500 kept messages over many log files (tables of several blocks), and a unit past the first block
    that disagrees with its record: the same text up to it, and the same error."""
    import struct

    from rmqformats.batch_consumequeue import UNIT_DTYPE
    from rmqformats.synth import MessageSpec, encode_message
    from rmqformats.synth.compaction import write_compaction
    root = tmp_path / "store"
    (root / "commitlog").mkdir(parents=True)
    records = [encode_message(MessageSpec(topic="Kv", body=b"v%d" % i, queue_offset=i,
                                          properties={"KEYS": f"k{i}", "TAGS": f"t{i % 7}"}), 0) for i in range(2500)]
    placed = write_compaction(root, "Kv", 0, records, log_file_size=64 << 10, cq_units_per_file=1024)
    if bad is not None:
        cq = rmqformats.open_store(root).compaction().queues()[0].consume_queue()
        path, pos = cq.location(bad)
        field = UNIT_DTYPE.fields[UNIT_DTYPE.names[1]][1]  # the size
        with open(path, "r+b") as f:
            f.seek(pos + field)
            f.write(struct.pack(">i", 7))
    (pieces, objects), = _listings(root, fmt)
    assert pieces == objects
    assert (objects[1] is None) == (bad is None)
    lines = objects[0].count("\n")
    assert lines == (2500 if bad is None else bad if fmt == "jsonl" else bad // 1000 * 1000) + (
        fmt == "table" and (bad is None or bad >= 1000))
    assert len(placed) == 2500


@pytest.mark.parametrize("seed", range(20))
def test_column_blocks_regrouped_in_blocks_of_a_table(seed):
    import random

    import pyarrow as pa

    from rmqformats.cli.tables import column_blocks
    rng = random.Random(seed)
    sizes = [rng.choice([0, 1, 7, 999, 1000, 1001, 2500, rng.randrange(5000)]) for _ in range(rng.randrange(1, 8))]
    values = iter(range(1 << 30))
    blocks = [[pa.array([str(next(values)) for _ in range(n)], pa.string())] for n in sizes]
    blocks = [[b[0], pa.array([v + "x" for v in b[0].to_pylist()], pa.string())] for b in blocks]
    out = list(column_blocks(iter(blocks), 1000))
    assert all(len(b[0]) == 1000 for b in out[:-1]) and (not out or 0 < len(out[-1][0]) <= 1000)
    for i in range(2):
        assert [v for b in out for v in b[i].to_pylist()] == [v for b in blocks for v in b[i].to_pylist()]

"""Compaction logs and queues (5.1.0+) built from the vector stores read back as the kept messages.

The compaction files are made through the construct schemas by
:func:`layoutstores.compaction_store` from the vector stores' own records.
The 5.1.4 and 5.3.3 vectors' own ``compaction/position-checkpoint`` (empty,
written by the broker) are read as they are.
"""

from __future__ import annotations

import json

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

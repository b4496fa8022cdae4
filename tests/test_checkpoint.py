"""The store checkpoint and the abort/lock shutdown state, against RocketMQ's own readings."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import pytest
from conftest import FIXTURES, store_path, truth_records
from rmqformats.generated.construct.rocketmq_checkpoint import rocketmq_checkpoint
from rmqformats.generated.kaitai.rocketmq_checkpoint import RocketmqCheckpoint

import rmqformats
from rmqformats.checkpoint import (
    CHECKPOINT_FILE_SIZE,
    Checkpoint,
    read_checkpoint,
    read_store_state,
)
from rmqformats.errors import CheckpointError, RmqFormatError
from rmqformats.synth.timer import encode_checkpoint


def _truth(version: str) -> dict:
    return json.loads((FIXTURES / version / "truth" / "checkpoint.json").read_text(encoding="utf-8"))


def _fields(cp: Checkpoint) -> dict:
    return {"physicMsgTimestamp": cp.physic_msg_timestamp, "logicsMsgTimestamp": cp.logics_msg_timestamp,
            "indexMsgTimestamp": cp.index_msg_timestamp, "masterFlushedOffset": cp.master_flushed_offset,
            "confirmPhyOffset": cp.confirm_phy_offset}


def test_checkpoint_matches_rocketmq(version):
    truth = _truth(version)
    cp = rmqformats.open_store(store_path(version)).checkpoint()
    got = _fields(cp)
    for key in ("physicMsgTimestamp", "logicsMsgTimestamp", "indexMsgTimestamp"):
        assert got[key] == truth[key], key
    # 5.1.4's StoreCheckpoint reports the 5.x fields; a 4.9.7 file has zeros where they would be.
    assert got["masterFlushedOffset"] == truth.get("masterFlushedOffset", 0)
    assert got["confirmPhyOffset"] == truth.get("confirmPhyOffset", 0)
    assert os.path.getsize(store_path(version) / "checkpoint") == truth["checkpointFileSize"] == CHECKPOINT_FILE_SIZE


# The flush service records the store time of the mapped file at the flush position before it flushes, so
# even after a clean shutdown the mark can be older than the newest message, as in 4.9.7 and 5.1.4. In 5.3.3
# the newest message is a timer delivery written a second after the one before it, and the mark is its time.
FLUSH_MARK_IS_NEWEST = {"rocketmq-4.9.7": False, "rocketmq-5.1.4": False, "rocketmq-5.3.3": True}


def test_checkpoint_times_are_utc_and_not_the_last_message_time(version):
    cp = rmqformats.open_store(store_path(version)).checkpoint()
    assert cp.physic_msg_time == datetime.fromtimestamp(cp.physic_msg_timestamp / 1000, tz=timezone.utc)
    assert cp.physic_msg_time.tzinfo is timezone.utc
    assert cp.index_msg_time.timestamp() * 1000 == pytest.approx(cp.index_msg_timestamp)
    store_times = {r["storeTimestamp"] for r in truth_records(version) if r["kind"] == "MESSAGE"}
    newest = max(store_times)
    assert cp.physic_msg_timestamp in store_times
    if FLUSH_MARK_IS_NEWEST[version]:
        assert cp.physic_msg_timestamp == newest
    else:
        assert cp.physic_msg_timestamp < newest
    assert cp.logics_msg_timestamp <= newest


def test_min_timestamps_follow_store_checkpoint(version):
    cp = rmqformats.open_store(store_path(version)).checkpoint()
    assert cp.min_timestamp == min(cp.physic_msg_timestamp, cp.logics_msg_timestamp) - 3000
    assert cp.min_timestamp_index == min(cp.min_timestamp, cp.index_msg_timestamp)


def test_kaitai_and_construct_read_the_same_values(version):
    path = store_path(version) / "checkpoint"
    cp = read_checkpoint(path)
    k = RocketmqCheckpoint.from_file(str(path))
    c = rocketmq_checkpoint.parse_file(str(path))
    for parsed, get in ((k, getattr), (c, lambda o, n: o[n])):
        assert (get(parsed, "physic_msg_timestamp"), get(parsed, "logics_msg_timestamp"),
                get(parsed, "index_msg_timestamp"), get(parsed, "ofs_master_flushed"),
                get(parsed, "ofs_confirm_phy")) == tuple(_fields(cp).values())
        assert get(parsed, "min_timestamp") == cp.min_timestamp
        assert get(parsed, "min_timestamp_index") == cp.min_timestamp_index
        assert get(parsed, "reserved") == bytes(CHECKPOINT_FILE_SIZE - 40)
    k.close()


def test_state_matches_rocketmq(version):
    truth = _truth(version)
    store = rmqformats.open_store(store_path(version))
    state = store.state()
    assert state.abort_exists is truth["abortFileExists"] is False
    assert state.lock_exists is truth["lockFileExists"] is True
    assert state.lock_content == b"lock"
    assert state.clean_shutdown and not store.has_abort_file
    assert state.abort_pid is None and state.previous_unclean_pid is None
    assert state.summary() == "clean shutdown (no abort file); lock file present"
    # 5.x writes abort with MixAll.string2File, which leaves an empty abort.bak behind; 4.x does not.
    is_5x = version.startswith("rocketmq-5.")
    assert state.abort_bak_exists is is_5x
    assert state.abort_bak_content == (b"" if is_5x else None)


# -- crash-like copies of the vectors -------------------------------------------------------


def test_abort_file_with_pid_means_unclean_shutdown(store_copy, version):
    (store_copy / "abort").write_bytes(b"31337")  # what a 5.x broker writes
    store = rmqformats.open_store(store_copy)
    state = store.state()
    assert not state.clean_shutdown and state.abort_exists and store.has_abort_file
    assert state.abort_content == b"31337" and state.abort_pid == 31337
    assert "unclean shutdown" in state.summary() and "process 31337" in state.summary()
    assert "abnormal recovery" in state.summary()
    # The checkpoint is read the same way whatever the shutdown state.
    assert store.checkpoint() == read_checkpoint(store_path(version) / "checkpoint")


def test_empty_abort_file_is_a_4x_unclean_shutdown(store_copy):
    (store_copy / "abort").write_bytes(b"")
    state = read_store_state(store_copy)
    assert state.abort_exists and not state.clean_shutdown
    assert state.abort_content == b"" and state.abort_pid is None
    assert state.summary().startswith("unclean shutdown: abort file left by the broker;")


def test_abort_bak_with_pid_is_history_not_the_current_state(store_copy):
    # A 5.x broker that started over a crashed one copies the old PID into abort.bak.
    (store_copy / "abort.bak").write_bytes(b"4242")
    state = read_store_state(store_copy)
    assert state.clean_shutdown
    assert state.previous_unclean_pid == 4242
    assert "earlier unclean stop of process 4242" in state.summary()


def test_abort_content_is_read_bounded(store_copy):
    (store_copy / "abort").write_bytes(b"9" * (1 << 20))
    state = read_store_state(store_copy)
    assert len(state.abort_content) == 64
    assert state.abort_pid is None  # not a PID a broker writes
    assert not state.clean_shutdown


def test_no_lock_file(store_copy):
    (store_copy / "lock").unlink()
    state = read_store_state(store_copy)
    assert not state.lock_exists and state.lock_content is None
    assert state.summary() == "clean shutdown (no abort file)"


@pytest.mark.parametrize("size", [0, 7, 8, 24, 39])
def test_truncated_checkpoint_is_a_typed_error(store_copy, size):
    path = store_copy / "checkpoint"
    data = path.read_bytes()
    path.write_bytes(data[:size])
    with pytest.raises(CheckpointError) as err:
        rmqformats.open_store(store_copy).checkpoint()
    assert isinstance(err.value, RmqFormatError)
    assert err.value.offset == size and err.value.path == str(path)
    field = ["physic_msg_timestamp"] * 8 + ["logics_msg_timestamp"] * 8 + ["index_msg_timestamp"] * 8 \
        + ["ofs_master_flushed"] * 8 + ["ofs_confirm_phy"] * 8
    assert str(err.value).startswith(f"store/checkpoint @ 0x{size:x}: file ends inside {field[size]}")


def test_zero_checkpoint_reads_as_unset(store_copy):
    (store_copy / "checkpoint").write_bytes(bytes(CHECKPOINT_FILE_SIZE))
    cp = rmqformats.open_store(store_copy).checkpoint()
    assert _fields(cp) == dict.fromkeys(_fields(cp), 0)
    assert cp.physic_msg_time is None and cp.logics_msg_time is None and cp.index_msg_time is None
    assert cp.min_timestamp == 0 and cp.min_timestamp_index == 0


def test_missing_checkpoint_is_none(store_copy):
    (store_copy / "checkpoint").unlink()
    assert rmqformats.open_store(store_copy).checkpoint() is None


def test_built_5x_checkpoint_round_trips(tmp_path):
    values = {"physic_msg_timestamp": 1_700_000_000_123, "logics_msg_timestamp": 1_700_000_000_456,
              "index_msg_timestamp": 1_699_999_990_000, "master_flushed_offset": 1 << 33,
              "confirm_phy_offset": 123_456_789}
    path = tmp_path / "checkpoint"
    path.write_bytes(encode_checkpoint(**values))
    assert path.stat().st_size == CHECKPOINT_FILE_SIZE
    cp = read_checkpoint(path)
    assert cp == Checkpoint(**values)
    assert cp.min_timestamp == 1_700_000_000_123 - 3000
    assert cp.min_timestamp_index == 1_699_999_990_000
    k = RocketmqCheckpoint.from_file(str(path))
    assert (k.ofs_master_flushed, k.ofs_confirm_phy, k.min_timestamp_index) == (1 << 33, 123_456_789, 1_699_999_990_000)
    k.close()

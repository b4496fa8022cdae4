"""A commit log spread over several folders (``storePathCommitLog`` with ``;``) reads as the one log it is."""

from __future__ import annotations

import shutil

import pytest

import rmqformats
from rmqformats import EndReason, StoreNotFoundError
from rmqformats.cli import main

from conftest import store_path, truth_records
from layoutstores import multi_folder_copy
from test_commitlog_api import api_row
from test_store_readonly import _snapshot
from truthcmp import count_mismatches


def test_messages_and_data_end_match_truth(tmp_path, version):
    folders = multi_folder_copy(version, tmp_path)
    store = rmqformats.open_store(";".join(map(str, folders)))
    assert store.root is None
    assert len({s.path.rsplit("/", 2)[0] for s in store.commitlog.segments}) == 3
    scan = store.commitlog.scan(verify_crc=True)
    truth = truth_records(version)
    n, details = count_mismatches([api_row(m) for m in scan], [t for t in truth if t["kind"] == "MESSAGE"])
    assert n == 0, details
    plain = rmqformats.open_store(store_path(version)).commitlog.scan()
    list(plain)
    assert scan.end.reason is EndReason.ZERO_TAIL
    assert (scan.end.offset, scan.end.file_offset) == (plain.end.offset, plain.end.file_offset)
    assert [(b.commitlog_offset, b.length) for b in scan.blanks] == [(b.commitlog_offset, b.length) for b in plain.blanks]
    # Reads by offset find the segment in whichever folder holds it.
    for t in truth[:: 37]:
        if t["kind"] == "MESSAGE":
            assert store.commitlog.read(t["commitlogOffset"]).msg_id == t["msgId"]


def test_store_root_with_commitlog_folders(tmp_path, version):
    """``open_store(root, commitlog=...)``: the root's queues resolve through the spread commit log."""
    root = tmp_path / "root"
    shutil.copytree(store_path(version), root, ignore=shutil.ignore_patterns("commitlog"))
    folders = multi_folder_copy(version, tmp_path, 2)
    store = rmqformats.open_store(root, commitlog=";".join(map(str, folders)))
    report = store.check_consistency()
    assert report.ok
    assert sum(q.count for q in store.queues()) == sum(q.count for q in rmqformats.open_store(store_path(version)).queues())


def test_comma_separated_as_the_brokers_default_splitter(tmp_path):
    folders = multi_folder_copy("rocketmq-5.1.4", tmp_path, 2)
    log = rmqformats.open_store(",".join(map(str, folders))).commitlog
    assert len(log.segments) == 5


def test_a_segment_in_two_folders_is_an_error(tmp_path):
    folders = multi_folder_copy("rocketmq-4.9.7", tmp_path, 2)
    first = sorted(folders[0].iterdir())[0]
    shutil.copy2(first, folders[1] / first.name)
    with pytest.raises(StoreNotFoundError) as err:
        rmqformats.open_store(";".join(map(str, folders)))
    assert first.name in str(err.value) and str(folders[0]) in str(err.value)
    with pytest.raises(StoreNotFoundError):
        rmqformats.open_store(f"{folders[0]};{tmp_path / 'missing'}")


def test_commands_work_and_change_nothing(tmp_path, capsys):
    folders = multi_folder_copy("rocketmq-5.3.3", tmp_path)
    before = _snapshot(tmp_path)
    spec = ";".join(map(str, folders))
    assert main(["inspect", spec, "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert '"multiFolder"' in out
    assert main(["messages", spec, "--format", "jsonl"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 322
    assert _snapshot(tmp_path) == before


def test_cli_store_root_with_commitlog_folders(tmp_path, capsys):
    """``--commitlog``: a root whose commit log is kept in other folders; queue, check and lag resolve through it."""
    version = "rocketmq-5.1.4"
    root = tmp_path / "root"
    shutil.copytree(store_path(version), root, ignore=shutil.ignore_patterns("commitlog"))
    spec = ";".join(map(str, multi_folder_copy(version, tmp_path, 2)))
    before = _snapshot(tmp_path)
    for argv in (["check"], ["queue", "TopicTest", "1", "--resolve"], ["lag"], ["inspect"],
                 ["lookup", "--topic", "TopicTest", "--key", "key-1"]):
        assert main([argv[0], str(root), *argv[1:], "--commitlog", spec]) == 0, argv
    out = capsys.readouterr().out
    assert "consistent" in out
    assert _snapshot(tmp_path) == before

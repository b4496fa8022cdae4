"""The columnar decoder's thread pool in a process forked after the parent used it."""

from __future__ import annotations

import os
import signal

import pytest

import rmqformats

from conftest import store_path, truth_records


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_threads_work_in_a_child_forked_after_the_parent_used_them():
    log = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog
    expected = sum(1 for r in truth_records("rocketmq-5.1.4") if r["kind"] == "MESSAGE")
    # The parent's scan starts the process-wide pool's worker threads.
    assert log.batches(["commitLogOffset"], threads=2, range_size=4096).read_all().num_rows == expected
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the same scan must finish, with the same rows
        try:
            signal.alarm(60)  # a hang ends the child, and the parent sees no answer
            n = log.batches(["commitLogOffset"], threads=2, range_size=4096).read_all().num_rows
            os.write(write, str(n).encode())
        finally:
            os._exit(0)
    os.close(write)
    try:
        answer = b""
        while chunk := os.read(read, 64):
            answer += chunk
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert answer == str(expected).encode()

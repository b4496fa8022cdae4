"""Reading every part of a store leaves it exactly as it was: no byte, file or time changes."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat

import rmqformats
from rmqformats.cli import main

from conftest import store_path


def _snapshot(root) -> dict:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st = os.stat(path)
            digest = hashlib.sha256(open(path, "rb").read()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns, st.st_mode, digest)
    return out


def test_every_reader_leaves_the_store_unchanged(tmp_path, version, capsys):
    root = tmp_path / "store"
    shutil.copytree(store_path(version), root)
    for folder, dirs, files in os.walk(root):  # read-only, as a store under investigation should be
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)
    before = _snapshot(root)

    store = rmqformats.open_store(root)
    list(store.commitlog.scan(verify_crc=True))
    for q in store.queues():
        list(store.consume_queue(q.topic, q.queue_id).messages())
    for q in store.batch_queues():
        list(store.batch_consume_queue(q.topic, q.queue_id).messages())
    assert store.check_consistency().ok
    assert store.lookup("TopicTest", "key-1")
    store.checkpoint(), store.state(), list(store.timer().units())
    store.config()
    list(store.consumer_lag())
    for argv in (["inspect"], ["queue"], ["check"], ["config"], ["lag"],
                 ["lookup", "--topic", "TopicTest", "--key", "key-1"]):
        # 0, or 1 where lag flags a queue (5.3.3 commits an offset beyond a queue's max)
        assert main([argv[0], str(root), *argv[1:]]) in ((0, 1) if argv == ["lag"] else (0,))
    capsys.readouterr()

    assert _snapshot(root) == before

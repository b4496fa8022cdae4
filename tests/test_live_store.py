"""A store whose broker is writing: records appear byte by byte in a zero-filled segment while it is scanned.

The broker encodes each record whole and copies it into the pre-allocated,
zero-filled segment at the write position. Here the last records of a copy
of a vector store's last segment are zeroed and written again one byte at a
time; after every byte both decoders scan the segment, with and without
``live``. No half-written record is ever returned, ``live`` never reports
damage, and the last scan equals the ground truth.
"""

from __future__ import annotations

import base64
import os
import random
import shutil
import threading
import time

from rmqformats import EndReason
from rmqformats.commitlog import CommitLog

from conftest import store_path, truth_records

#: Records written again, byte by byte, at the end of the last segment.
_RECORDS = 2


def _setup(tmp_path, version):
    msgs = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    name = msgs[-1]["file"]
    in_seg = [t for t in msgs if t["file"] == name]
    (tmp_path / "commitlog").mkdir()
    seg = tmp_path / "commitlog" / name
    shutil.copyfile(store_path(version) / "commitlog" / name, seg)
    begin = in_seg[-_RECORDS]["fileOffset"]
    end = in_seg[-1]["fileOffset"] + in_seg[-1]["totalSize"]
    with open(seg, "r+b") as f:
        f.seek(begin)
        data = f.read(end - begin)
        f.seek(begin)
        f.write(bytes(end - begin))
    return seg, in_seg, begin, data


def _scans(log):
    """(offsets, end) of each decoder, with and without ``live``."""
    out = {}
    for live in (False, True):
        scan = log.scan(live=live)
        msgs = list(scan)
        out["object", live] = ([(m.commitlog_offset, m.body_raw, m.properties_raw) for m in msgs], scan.end)
        cscan = log.batches(["commitLogOffset", "body", "propertiesString"], decompress=False, live=live)
        table = cscan.read_all()
        rows = list(zip(table.column("commitLogOffset").to_pylist(), table.column("body").to_pylist(),
                        table.column("propertiesString").to_pylist()))
        out["columnar", live] = (rows, cscan.end)
    return out


def _truth_rows(recs):
    return [(t["commitlogOffset"], base64.b64decode(t["bodyRawBase64"]), t["propertiesString"]) for t in recs]


def _check(log, in_seg, written_to):
    """Every message returned is a whole record of the truth that lies in the bytes written so far."""
    truth = _truth_rows(in_seg)
    complete = [r for r, t in zip(truth, in_seg) if t["fileOffset"] + t["totalSize"] <= written_to]
    for (api, live), (rows, end) in _scans(log).items():
        assert rows == complete, (api, live, written_to)
        if live:
            assert end.reason.is_clean, (api, written_to, end)
        else:
            assert end.reason in (EndReason.ZERO_TAIL, EndReason.UNFINISHED, EndReason.BAD_SIZE,
                                  EndReason.BAD_MAGIC, EndReason.TRUNCATED), (api, written_to, end)
    return rows, end


def test_records_written_byte_by_byte(tmp_path, version):
    seg, in_seg, begin, data = _setup(tmp_path, version)
    log = CommitLog(tmp_path / "commitlog")
    fd = os.open(seg, os.O_WRONLY)
    try:
        _check(log, in_seg, begin)
        for i in range(len(data)):
            os.pwrite(fd, data[i:i + 1], begin + i)
            _check(log, in_seg, begin + i + 1)
    finally:
        os.close(fd)
    rows, end = _check(log, in_seg, begin + len(data))
    assert rows == _truth_rows(in_seg) and end.reason is EndReason.ZERO_TAIL


def test_scans_while_a_thread_writes(tmp_path):
    """The same while another thread writes (bounded: one pass of the bytes, a few seconds)."""
    version = "rocketmq-5.3.3"
    seg, in_seg, begin, data = _setup(tmp_path, version)
    log = CommitLog(tmp_path / "commitlog")
    done = threading.Event()

    def writer():
        fd = os.open(seg, os.O_WRONLY)
        steps = random.Random(5)
        try:
            i = 0
            while i < len(data):  # a few bytes at a time, front to back, as a broker's copy goes
                n = steps.randint(1, 8)
                os.pwrite(fd, data[i:i + n], begin + i)
                i += n
                time.sleep(0.0002)
        finally:
            os.close(fd)
            done.set()
    t = threading.Thread(target=writer)
    t.start()
    truth = _truth_rows(in_seg)
    scans = 0
    try:
        while not done.is_set():
            if scans % 2:
                scan = log.batches(["commitLogOffset", "body", "propertiesString"], decompress=False, live=True)
                table = scan.read_all()
                rows = list(zip(table.column("commitLogOffset").to_pylist(), table.column("body").to_pylist(),
                                table.column("propertiesString").to_pylist()))
            else:
                scan = log.scan(live=True)
                rows = [(m.commitlog_offset, m.body_raw, m.properties_raw) for m in scan]
            assert rows == truth[:len(rows)] and len(rows) >= len(truth) - _RECORDS
            assert scan.end.reason.is_clean, scan.end
            scans += 1
    finally:
        t.join()
    assert scans > 0
    scan = log.scan(live=True)
    assert [(m.commitlog_offset, m.body_raw, m.properties_raw) for m in scan] == truth

"""The command line on the bundled sample and the vector stores."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rmqformats.cli import main

from conftest import store_path, truth_records

# The Java-side names of a message in JSON Lines output, in order.
JSONL_KEYS = ["commitLogOffset", "storeSize", "bodyCRC", "queueId", "flag", "queueOffset", "sysFlag",
              "bornTimestamp", "bornHost", "storeTimestamp", "storeHost", "reconsumeTimes",
              "preparedTransactionOffset", "topic", "properties", "msgId", "body"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _host(host, port):
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def test_messages_jsonl_matches_truth(capsys, version):
    code, out, _ = run(capsys, "messages", str(store_path(version)), "--format", "jsonl")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    assert len(rows) == len(truth)
    bad = 0
    for r, t in zip(rows, truth):
        assert list(r) == JSONL_KEYS
        body = t.get("bodyDecompressedBase64", t["bodyRawBase64"])
        expected = {
            "commitLogOffset": t["commitlogOffset"], "storeSize": t["storeSize"], "bodyCRC": t["bodyCRC"],
            "queueId": t["queueId"], "flag": t["flag"], "queueOffset": t["queueOffset"],
            "sysFlag": t["sysFlag"], "bornTimestamp": t["bornTimestamp"],
            "bornHost": _host(t["bornHost"], t["bornPort"]), "storeTimestamp": t["storeTimestamp"],
            "storeHost": _host(t["storeHost"], t["storePort"]), "reconsumeTimes": t["reconsumeTimes"],
            "preparedTransactionOffset": t["preparedTransactionOffset"], "topic": t["topic"],
            "properties": t["properties"], "msgId": t["msgId"], "body": body,
        }
        bad += r != expected
    assert bad == 0


def test_messages_filters(capsys):
    truth = [t for t in truth_records("rocketmq-5.1.4") if t["kind"] == "MESSAGE"]
    root = str(store_path("rocketmq-5.1.4"))

    def offsets(*filters):
        code, out, _ = run(capsys, "messages", root, "--format", "jsonl", *filters)
        assert code == 0
        return [json.loads(line)["commitLogOffset"] for line in out.splitlines()]

    assert offsets("--topic", "TopicTest", "--queue", "2") == [
        t["commitlogOffset"] for t in truth if t["topic"] == "TopicTest" and t["queueId"] == 2]
    assert offsets("--tag", "TagB") == [t["commitlogOffset"] for t in truth if t["tags"] == "TagB"]
    assert offsets("--key", "order-3") == [
        t["commitlogOffset"] for t in truth if "order-3" in (t["keys"] or "").split(" ")]
    uniq = truth[7]["uniqKey"]
    assert offsets("--key", uniq) == [t["commitlogOffset"] for t in truth if t["uniqKey"] == uniq]
    ts = sorted({t["storeTimestamp"] for t in truth})
    lo, hi = ts[len(ts) // 3], ts[2 * len(ts) // 3]
    assert offsets("--since", str(lo), "--until", str(hi)) == [
        t["commitlogOffset"] for t in truth if lo <= t["storeTimestamp"] < hi]
    a, b = truth[100]["commitlogOffset"], truth[290]["commitlogOffset"]
    assert offsets("--from-offset", str(a), "--to-offset", str(b)) == [
        t["commitlogOffset"] for t in truth if a <= t["commitlogOffset"] < b]
    assert offsets("--limit", "3") == [t["commitlogOffset"] for t in truth[:3]]
    assert offsets("--msg-id", truth[42]["msgId"]) == [truth[42]["commitlogOffset"]]


def test_iso_time_filter(capsys):
    code, out, _ = run(capsys, "messages", "--sample", "--since", "2000-01-01T00:00:00Z",
                       "--until", "2000-01-02", "--format", "jsonl")
    assert code == 0 and out == ""


def test_messages_table(capsys):
    code, out, _ = run(capsys, "messages", "--sample", "--topic", "TopicBig")
    lines = out.splitlines()
    assert lines[0].split() == ["commitLogOffset", "topic", "queueId", "queueOffset", "storeTimestamp", "tags", "keys",
                                "msgId", "bodyBytes"]
    assert len(lines) == 1 + 4 and all("TopicBig" in line for line in lines[1:])


def test_inspect_sample(capsys):
    code, out, _ = run(capsys, "inspect", "--sample", "--format", "json")
    info = json.loads(out)
    assert info["messages"] == 309 and info["blankRecords"] == 4
    assert info["recordVersions"] == {"V1": 308, "V2": 1}
    assert info["dataEnd"]["reason"] == "ZERO_TAIL" and info["dataEnd"]["commitLogOffset"] == 1281605
    assert info["topics"]["TopicTest"]["queues"] == {"0": 32, "1": 34, "2": 34, "3": 31}
    assert info["abortFile"] is False
    code, out, _ = run(capsys, "inspect", "--sample")
    assert "zero-filled tail" in out and "TopicCqRoll" in out and "shutdown   clean" in out


def test_inspect_reports_corrupt_end(capsys, store_copy, version):
    rec = [t for t in truth_records(version) if t["kind"] == "MESSAGE"][10]
    with open(store_copy / "commitlog" / rec["file"], "r+b") as f:
        f.seek(rec["fileOffset"] + 4)
        f.write(b"\0\0\0\0")
    code, out, _ = run(capsys, "inspect", str(store_copy), "--format", "json")
    end = json.loads(out)["dataEnd"]
    assert (end["reason"], end["commitLogOffset"], end["clean"]) == ("BAD_MAGIC", rec["commitlogOffset"], False)
    assert end["bytesAfterInLaterSegments"] == 4 * 262144
    code, out, err = run(capsys, "messages", str(store_copy), "--format", "jsonl")
    assert len(out.splitlines()) == 10 and "data ends early" in err and "bad magic 0x00000000" in err


def test_errors_are_reported_not_raised(capsys, tmp_path):
    code, _, err = run(capsys, "inspect", str(tmp_path / "missing"))
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "messages", "--sample", "--msg-id", "XYZ")
    assert code == 2 and "not hexadecimal" in err
    code, _, err = run(capsys, "messages", "--sample", "--offset", "5")
    assert code == 2 and "@ 0x5: no message starts here" in err


def test_console_script_without_tty_has_no_progress_bar():
    proc = subprocess.run([sys.executable, "-m", "rmqformats", "inspect", "--sample"],
                          capture_output=True, text=True, check=True)
    assert proc.stderr == "" and "messages   309" in proc.stdout


def test_progress_bar_on_a_terminal(tmp_path):
    """With stderr on a terminal, a long scan draws a progress bar there."""
    import os
    import pty

    from rmqformats import synth

    specs = (synth.MessageSpec(topic="T", body=bytes(2000), queue_offset=i) for i in range(3000))
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 20)
    pid, fd = pty.fork()
    if pid == 0:  # child: stdout and stderr are the terminal, 100 columns wide
        import fcntl
        import struct
        import termios
        fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        os.execv(sys.executable, [sys.executable, "-m", "rmqformats", "inspect", str(tmp_path),
                                  "--format", "jsonl"])
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.waitpid(pid, 0)
    text = b"".join(chunks).decode(errors="replace")
    assert "scan:" in text and "B/s" in text
    assert '"messages": 3000' in text


def test_inspect_checks_crc_by_default_and_reports_gaps(capsys, store_copy, version):
    rec = next(t for t in truth_records(version) if t["kind"] == "MESSAGE" and t["bodyLength"] > 0)
    body_at = rec["fileOffset"] + rec["totalSize"] - rec["bodyLength"] - len(rec["topic"].encode()) - 3 \
        - len(rec["propertiesString"].encode())
    with open(store_copy / "commitlog" / rec["file"], "r+b") as f:
        f.seek(body_at)
        f.write(b"#")
    (store_copy / "commitlog" / "00000000000000524288").unlink()
    _, out, _ = run(capsys, "inspect", str(store_copy), "--format", "json")
    info = json.loads(out)
    assert info["dataEnd"]["reason"] == "CRC_MISMATCH" and info["dataEnd"]["commitLogOffset"] == rec["commitlogOffset"]
    assert info["segmentGaps"] == [{"after": "00000000000000262144", "expectedOffset": 524288,
                                    "next": "00000000000000786432"}]
    _, out, _ = run(capsys, "inspect", str(store_copy), "--no-verify-crc")
    assert "gap: 00000000000000262144 ends at offset 524288" in out and "zero-filled tail" in out


def test_inspect_reports_an_unclean_shutdown(capsys, store_copy):
    (store_copy / "abort").write_text("")
    _, out, _ = run(capsys, "inspect", str(store_copy))
    assert ("shutdown   unclean shutdown: abort file left by the broker; the next start runs abnormal "
            "recovery; lock file present") in out
    (store_copy / "abort").write_text("4242")
    _, out, _ = run(capsys, "inspect", str(store_copy), "--format", "json")
    info = json.loads(out)
    assert info["shutdown"] == {"clean": False, "abortFile": True, "abortPid": 4242, "lockFile": True,
                                "summary": info["shutdown"]["summary"]}


def test_inspect_shows_checkpoint_queues_and_index(capsys, version):
    truth = json.loads((store_path(version).parent / "truth" / "checkpoint.json").read_text())
    _, out, _ = run(capsys, "inspect", str(store_path(version)), "--format", "json")
    info = json.loads(out)
    for key, value in info["checkpoint"].items():
        assert truth.get(key, 0) == value, key
    cq = json.loads((store_path(version).parent / "truth" / "consumequeue.json").read_text())
    assert info["consumeQueues"]["queues"] == sum(len(q) for q in cq.values())
    assert info["consumeQueues"]["units"] == sum(len(d["units"]) for q in cq.values() for d in q.values())
    index = json.loads((store_path(version).parent / "truth" / "index.json").read_text())
    assert info["indexFiles"]["files"] == len(index["files"]) and info["indexFiles"]["hashSlots"] == 64
    _, out, _ = run(capsys, "inspect", str(store_path(version)))
    assert "checkpoint physic 2026-" in out and "consume queues" in out and "index      " in out


def test_version(capsys):
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("rmqformats 0.")


# -- the messages table streams -------------------------------------------------------------------------

def test_messages_table_is_the_table_of_all_rows_while_they_fit_one_block(capsys, version):
    """Up to the first block (1000 rows) the streamed table is the one sized from every row."""
    from rmqformats import open_store
    from rmqformats.cli.common import print_table as _table
    from rmqformats.cli.messages import _MESSAGE_HEADER, _message_row
    from rmqformats.sample import sample_store_path

    for root in (store_path(version), sample_store_path()):
        import io
        expected = io.StringIO()
        _table([_message_row(m) for m in open_store(root).commitlog.scan()], _MESSAGE_HEADER, expected)
        code, out, _ = run(capsys, "messages", str(root))
        assert code == 0 and out == expected.getvalue()
    code, out, _ = run(capsys, "messages", str(store_path(version)), "--topic", "NoSuchTopic")
    assert out.split() == _MESSAGE_HEADER


def test_table_stream_fixes_widths_from_the_first_block():
    import io

    import pyarrow as pa

    from rmqformats.export import TableStream

    out = io.StringIO()
    table = TableStream(["n", "text", "id"], out, block=2, cut=(1,))
    table.write([pa.array(["1", "2"]), pa.array(["short", "longer"]), pa.array(["a", "b"])])
    table.write([pa.array(["300"]), pa.array(["much longer than the column"]), pa.array(["c" * 12])])
    table.write([pa.array(["4"]), pa.array([None], pa.string()), pa.array(["d"])])
    table.close()
    assert out.getvalue().splitlines() == [
        "n  text    id",
        "1  short   a",
        "2  longer  b",
        "300  mu…umn  cccccccccccc",  # a number or id overflows its column; text is cut in the middle
        "4          d",
    ]


def _big_commitlog(root, n: int) -> int:
    """A commit log of ``n`` small messages in one segment: one record built by ``synth``, repeated with
    each copy's commit-log offset and queue offset written in; returns its size in bytes."""
    import numpy as np

    from rmqformats import synth
    from rmqformats.walk import layout

    rec = np.frombuffer(synth.encode_message(synth.MessageSpec(topic="T", body=b"x" * 16,
                                                               properties={"TAGS": "t"}), 0), np.uint8)
    size = len(rec)
    data = np.tile(rec, n).reshape(n, size)
    idx = np.arange(n, dtype=np.int64)
    data[:, layout.POS_PHYSICAL:layout.POS_PHYSICAL + 8] = (idx * size).astype(">i8").view(np.uint8).reshape(n, 8)
    data[:, layout.POS_QUEUE_OFFSET:layout.POS_QUEUE_OFFSET + 8] = idx.astype(">i8").view(np.uint8).reshape(n, 8)
    (root / "commitlog").mkdir(parents=True)
    data.tofile(root / "commitlog" / ("0" * 20))
    return size * n


def _messages_child(root, *args, after_first=None) -> dict:
    """Run ``rmqformats messages`` on ``root`` with stdout on a pipe; what the child had done when its first
    row came (``after_first`` runs then), its lines, stderr, and its peak resident memory."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # a pipe: the plain table, every column
    proc = subprocess.Popen([sys.executable, "-m", "rmqformats", "messages", str(root), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    header, first = proc.stdout.readline(), proc.stdout.readline()
    running = proc.poll() is None
    try:  # bytes the child has read (its store, its modules) when its first row came through the pipe
        with open(f"/proc/{proc.pid}/io") as f:
            rchar = int(next(line for line in f if line.startswith("rchar:")).split()[1])
    except OSError:
        rchar = None
    if after_first is not None:
        after_first()
    last, lines = first, 2
    for line in proc.stdout:
        last = line
        lines += 1
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    return {"header": header, "first": first, "last": last, "lines": lines, "running": running, "rchar": rchar,
            "maxrss": usage.ru_maxrss * 1024, "code": proc.returncode, "stderr": err}


def test_messages_table_streams_with_flat_memory(tmp_path):
    """The first row comes before the store is read, and a store three times larger takes no more memory.

    No timings. Streaming: once the first row is out, the child blocks on the pipe (64 KiB) after a few
    hundred more rows, so it cannot have read to the end of the store; the test then cuts the segment
    file short, and the child meets the cut (a typed error) instead of printing every row. Memory: the
    peak resident set (``wait4``) of two children, on 150,000 and 450,000 messages, is the same within far
    less than the 300,000 extra rows would take to hold (~350 bytes each).
    """
    import os

    small, large = tmp_path / "small", tmp_path / "large"
    n_small, n_large = 150_000, 450_000
    size_small = _big_commitlog(small, n_small)
    size_large = _big_commitlog(large, n_large)
    a = _messages_child(small)
    b = _messages_child(large)
    for r, n in ((a, n_small), (b, n_large)):
        assert r["code"] == 0 and r["lines"] == 1 + n and r["running"] and r["stderr"] == ""
        assert r["header"].split()[:3] == [b"commitLogOffset", b"topic", b"queueId"]
        assert r["first"].split()[:4] == [b"0", b"T", b"0", b"0"]
        assert r["last"].split()[3] == str(n - 1).encode()
    assert b["maxrss"] - a["maxrss"] < (n_large - n_small) * 100
    if a["rchar"] is not None:
        # Both children had read the same amount when their first row came: not the whole store.
        assert b["rchar"] - a["rchar"] < (size_large - size_small) // 2
    segment = large / "commitlog" / ("0" * 20)
    cut = _messages_child(large, after_first=lambda: os.truncate(segment, size_large * 3 // 4))
    assert cut["code"] == 2 and "shrank while it was read" in cut["stderr"]
    assert cut["lines"] < 1 + n_large


def test_messages_jsonl_streams_with_flat_memory(tmp_path):
    import os

    small, large = tmp_path / "small", tmp_path / "large"
    _big_commitlog(small, 100_000)
    size = _big_commitlog(large, 300_000)
    a = _messages_child(small, "--format", "jsonl")
    b = _messages_child(large, "--format", "jsonl")
    assert b["code"] == 0 and b["lines"] == 300_000 and b["running"]
    assert json.loads(b["last"])["queueOffset"] == 299_999
    assert b["maxrss"] - a["maxrss"] < 200_000 * 100
    cut = _messages_child(large, "--format", "jsonl",
                          after_first=lambda: os.truncate(large / "commitlog" / ("0" * 20), size * 3 // 4))
    assert cut["code"] == 2 and "shrank while it was read" in cut["stderr"] and cut["lines"] < 300_000


@pytest.mark.parametrize("version", ["rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3"])
def test_the_store_commands_import_no_pandas(version, tmp_path):
    """pyarrow imports pandas (a quarter of a second, tens of MiB, in every process) the first time it turns
    Python or numpy values into Arrow ones, or Arrow ones into numpy: the commands that walk a store do
    neither (the walk's workers run the same code)."""
    store = str(store_path(version))
    segment = str(store_path(version) / "commitlog" / ("0" * 20))
    commands = [["check", store, "--format", "jsonl"], ["inspect", store], ["inspect", store, "--format", "jsonl"],
                ["export", store, "--to", "parquet", str(tmp_path / "p")],
                ["export", store, "--to", "jsonl", str(tmp_path / "j.jsonl")],
                ["export", store, "--to", "csv", str(tmp_path / "c.csv")],
                ["messages", store], ["messages", store, "--format", "jsonl"], ["queues", store], ["lag", store],
                ["messages", store, "--decode-system"], ["export", store, "--to", "csv", "-", "--decode-system"],
                ["messages", store, "--tag", "TagA", "--tag", "TagB"], ["messages", store, "--key", "key-1"],
                ["messages", store, "--property", "CLUSTER=DefaultCluster"],
                ["messages", store, "--outstanding", "GroupA"], ["pending", store],
                ["pending", store, "--format", "json"], ["report", store, "-o", str(tmp_path / "r.html")],
                ["dump", segment, "--format", "jsonl"], ["dump", segment, "--deep", "--format", "json"],
                ["dump", segment, "--summary"], ["messages", store, "--body", "text"],
                ["messages", store, "--format", "jsonl", "--body", "hex", "--body-limit", "9"],
                ["messages", store, "--body-decoder", "json"], ["messages", store, "--body-decoder", "text:utf-8"],
                ["queue", store, "TopicTest", "0", "--resolve", "--format", "jsonl", "--body", "text"],
                ["queue", store, "TopicTest", "0", "--resolve", "--body", "hex"]]
    code = ("import contextlib, io, json, sys\n"
            "from rmqformats.cli import main\n"
            "done = []\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "        try:\n"
            "            code = main(argv)\n"
            "        except SystemExit as exit:\n"
            "            code = exit.code\n"
            "    done.append((argv[0], code, 'pandas' in sys.modules))\n"
            "print(json.dumps(done))\n")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(commands)], capture_output=True, text=True,
                         check=True).stdout
    done = json.loads(out)
    assert [name for name, _, _ in done] == [c[0] for c in commands]
    assert [code for _, code, _ in done][3:6] == [0, 0, 0]  # the exports wrote their files
    assert [name for name, _, loaded in done if loaded] == []

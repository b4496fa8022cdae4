"""Tables fit the terminal: with COLUMNS=80 no table line of any command is longer; --wide shows every column."""

from __future__ import annotations

import io

import pytest

from rmqformats.cli import main
from rmqformats.cli.messages import _MESSAGE_HEADER
from rmqformats.cli.tables import cut_middle, fit_layout, print_table

from conftest import store_path

VERSIONS = ("rocketmq-4.9.7", "rocketmq-5.1.4", "rocketmq-5.3.3")


def commands(root) -> list[list[str]]:
    files = sorted(str(p) for p in root.rglob("*") if p.is_file())
    return [["inspect", root], ["messages", root], ["messages", root, "--body", "text"], ["queue", root],
            ["queue", root, "TopicTest", "0", "--resolve", "--body", "text"],
            ["queue", root, "TopicCqRoll", "0", "--resolve"],
            ["lookup", root, "--topic", "TopicTest", "--key", "k1"],
            ["lookup", root, "--topic", "TopicTest", "--key", "k1", "--raw"],
            ["check", root], ["config", root], ["lag", root],
            ["dump", *files], ["dump", "--deep", *files], ["dump", "--summary", *files]] + (
        [["queue", root, "TopicBatchCQ", "0"], ["queue", root, "TopicBatchCQ", "0", "--resolve", "--body", "hex"]]
        if (root / "batchconsumequeue").is_dir() else [])


@pytest.mark.parametrize("version", VERSIONS)
def test_no_line_longer_than_columns(capsys, monkeypatch, version):
    import os

    monkeypatch.setenv("COLUMNS", "80")
    root = store_path(version)
    for argv in commands(root):
        argv = [str(a) for a in argv]
        code = main(argv)
        out, _ = capsys.readouterr()
        assert code in (0, 1), argv
        # Lines naming a file (dump's titles) are paths, whole by design; every other line fits.
        long = [line for line in out.splitlines() if len(line) > 80 and not os.path.exists(line)]
        assert not long, (argv, long[:3])


def test_wide_gives_every_column_and_whole_values(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    root = str(store_path("rocketmq-5.1.4"))
    assert main(["messages", root]) == 0
    out, err = capsys.readouterr()
    header = out.splitlines()[0].split()
    assert header != _MESSAGE_HEADER and set(header) < set(_MESSAGE_HEADER)
    assert "left out to fit 80 columns; --wide shows all" in err
    assert main(["messages", root, "--wide"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].split() == _MESSAGE_HEADER and err == ""
    assert "%RETRY%LongConsumerGroup_LongConsumerGroup_LongConsumerGroup_LongConsumerGroup_" in out  # whole
    long_topic = next(line for line in out.splitlines() if "%RETRY%LongConsumerGroup" in line)
    assert "LongConsumerGroup_LongConsumerGroup_LongConsumerGroup_LongConsumerGroup_" in long_topic
    assert max(len(line) for line in out.splitlines()) > 150


def test_plain_layout_without_a_terminal(capsys, monkeypatch):
    """Output to a pipe or file without COLUMNS: every column (pagers and scripts get the whole table)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["messages", str(store_path("rocketmq-5.1.4"))]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].split() == _MESSAGE_HEADER and err == ""
    assert "%RETRY%LongConsumerGroup_LongConsumerGroup_LongConsumerGroup_LongConsumerGroup_" in out  # whole


def test_fit_layout_cuts_text_then_drops_the_least_useful_columns():
    header = ["offset", "topic", "tagsCode", "storeTime", "keys"]
    rows = [[123456, "T" * 60, 99999, "2026-11-21T09:53:42.750Z", "k1 k2"]]
    out = io.StringIO()
    print_table(rows, header, out, width=60)
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert lines[0].split() == ["offset", "topic", "storeTime", "keys"]  # tagsCode goes first
    assert "…" in lines[1] and "2026-11-21T09:53:42.750Z" in lines[1]  # text cut, times whole
    assert [i for i, _ in fit_layout(header, [6, 60, 8, 24, 5], [False, True, False, False, True], None)] == \
        [0, 1, 2, 3, 4]
    assert cut_middle("abcdefghij", 5) == "ab…ij" and cut_middle("abc", 5) == "abc"


def test_wrapped_lines_keep_words_whole_unless_told_where_to_break(monkeypatch):
    """Text is broken at spaces; a word longer than a line stays whole, or with ``break_after="/"`` is broken
    after a ``/`` (a citation has no space), each piece as long as the line allows."""
    from rmqformats.cli.tables import write_wrapped

    monkeypatch.setenv("COLUMNS", "60")
    citation = ("rocketmq-all-5.5.0:remoting/src/main/java/org/apache/rocketmq/remoting/protocol/"
                "RemotingSerializable.java")
    out = io.StringIO()
    write_wrapped(f"source          {citation}", out, 16)
    assert out.getvalue().splitlines() == ["source", " " * 16 + citation]  # whole, on a line of its own
    out = io.StringIO()
    write_wrapped(f"source          {citation}", out, 16, break_after="/")
    assert out.getvalue().splitlines() == [
        "source          rocketmq-all-5.5.0:remoting/src/main/java/",
        "                org/apache/rocketmq/remoting/protocol/",
        "                RemotingSerializable.java"]
    out = io.StringIO()
    write_wrapped("source          a/b c/d", out, 16, break_after="/")
    assert out.getvalue() == "source          a/b c/d\n"  # fits: nothing broken
    out = io.StringIO()
    write_wrapped("note            short/words/fit/whole " * 3, out, 16, break_after="/")
    assert all(len(line) <= 60 for line in out.getvalue().splitlines())
    assert "short/words/fit/whole" in out.getvalue().splitlines()[1]  # shorter than a line: kept whole


@pytest.mark.parametrize("columns", [None, "80"])
def test_a_streamed_table_is_the_held_one_while_it_fits_a_block(monkeypatch, columns):
    """print_rows_streamed writes what print_table writes for the same rows (fitted or plain) while they fit
    in its first block; past it, the widths stay those of the first block, text is cut to them and
    numbers overflow, and rows are read one block at a time."""
    from rmqformats.cli.tables import print_rows_streamed

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    header = ["index", "topic", "storeTimestamp", "keys"]
    rows = [[i, f"topic-{'x' * (i * 7)}", f"2026-12-0{i % 9 + 1}T00:00:00Z", " ".join(["k"] * i)] for i in range(12)]
    held, streamed = io.StringIO(), io.StringIO()
    print_table(rows, header, held)
    assert print_rows_streamed(iter(rows), header, streamed) == 12
    assert streamed.getvalue() == held.getvalue()
    held, streamed = io.StringIO(), io.StringIO()
    print_table(rows, header, held, "  ")
    print_rows_streamed(iter(rows), header, streamed, "  ")
    assert streamed.getvalue() == held.getvalue()

    read = []

    def reading():
        for r in rows + [[10 ** 12, "t" * 300, "2026-12-07T00:00:00Z", "k"]]:
            read.append(r)
            yield r
    small, seen = io.StringIO(), []

    class Out(io.StringIO):
        def write(self, text):
            seen.append(len(read))  # rows read when the table wrote
            return small.write(text)
    assert print_rows_streamed(reading(), header, Out(), block=4) == 13
    lines = small.getvalue().splitlines()
    assert len(lines) == 14 and seen[0] == 4  # the header and first block went out after four rows
    first = lines[:5]
    width = max(len(line) for line in first)
    assert lines[-1].startswith("1000000000000 ")  # a number overflows its column, whole
    assert "…" in lines[-1] and len(lines[-1]) < width + len("1000000000000")  # text cut to the column


@pytest.mark.parametrize("sizes", [[13], [1, 1, 11], [3, 1, 9], [2, 5, 6], [4, 9], [0, 5, 0, 8]])
@pytest.mark.parametrize("columns", [None, "60"])
def test_a_table_streamed_as_columns_is_the_one_streamed_as_rows(monkeypatch, columns, sizes):
    """print_columns_streamed gives print_rows_streamed's table whatever the sizes of the blocks of columns:
    the widths and the columns that may be cut are the first ``block`` rows', where the blocks cut them."""
    import pyarrow as pa

    from rmqformats.cli.tables import print_columns_streamed, print_rows_streamed

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    header = ["index", "topic", "storeTimestamp"]
    # Past the first four rows: a wider number, a longer topic, and a column of numbers that turns to text.
    rows = [[i * 10 ** (i // 4), f"topic-{'x' * (i * 5)}", "2026-12-07T00:00:00Z" if i < 6 else f"late {i}"]
            for i in range(13)]
    by_rows = io.StringIO()
    assert print_rows_streamed(iter(rows), header, by_rows, block=4) == 13
    blocks, at = [], 0
    for size in sizes:
        part = rows[at:at + size]
        at += size
        blocks.append([pa.array([str(r[i]) for r in part], pa.string()) for i in range(3)])
    by_columns = io.StringIO()
    assert print_columns_streamed(iter(blocks), header, by_columns, block=4) == 13
    assert by_columns.getvalue() == by_rows.getvalue()


@pytest.mark.parametrize("seed", range(6))
def test_a_table_of_columns_is_the_table_of_its_rows(seed):
    """print_columns (one string array per column) writes what print_table writes of the same rows: plain
    and fitted to widths that cut text and leave columns out, with wide characters, combining marks,
    digits that are not ASCII, trailing spaces and values the fitting never cuts (numbers, times, ids)."""
    import random

    from rmqformats.cli import tables
    from rmqformats.frames import from_strings
    rnd = random.Random(seed)
    letters = ["a", "Z", "9", " ", "标", "\u0301", "\u0663", "\x1f", "é", "-"]
    whole = ["12345", "2026-11-22T19:50:22.289Z", "7F00000100002A9F0000000000000000", "-7", "1,024"]
    header = ["fileOffset", "record", "topic", "storeTimestamp", "keys", "msgId", "bodyBytes"]
    for _ in range(60):
        n = rnd.randrange(1, 30)
        rows = [[rnd.choice(whole) if rnd.random() < 0.3 else
                 "".join(rnd.choice(letters) for _ in range(rnd.randrange(20))) for _ in header] for _ in range(n)]
        columns = [from_strings([r[i] for r in rows]) for i in range(len(header))]
        for width in (None, rnd.randrange(20, 140)):
            tables._state["noted"] = False
            held, streamed = io.StringIO(), io.StringIO()
            print_table(rows, header, held, "  ", width=width)
            tables._state["noted"] = False
            tables.print_columns(columns, header, streamed, "  ", width=width)
            assert streamed.getvalue() == held.getvalue()

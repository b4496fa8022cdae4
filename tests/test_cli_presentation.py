"""Every command on every vector store, in each format it offers, held to the rules of
:mod:`rmqformats.cli.present`: one JSON key style, ISO 8601 times where a time is shown, decimal
offsets, one JSON value per line, and tables aligned in display cells with wide characters."""

from __future__ import annotations

import base64
import json
import re

import pytest

from rmqformats.cells import cells
from rmqformats.cli import main

from conftest import VERSIONS, store_path

#: ``command arguments`` (STORE, SEG, CP stand for the store, its first commit-log segment and its
#: checkpoint); the formats come from the command's own ``--format`` choices.
COMMANDS = (
    "inspect STORE",
    "messages STORE",
    "messages STORE --body text --topic TopicMisc",
    "queue STORE",
    "queue STORE TopicTest 0 --resolve",
    "lookup STORE --topic TopicTest --key key-5",
    "check STORE",
    "config STORE",
    "lag STORE",
    "messages STORE --count queue",
    "queue STORE --outstanding GroupA",
    "lookup STORE --topic TopicTest --key key-5 --raw",
    "dump SEG",
    "dump CP",
    "pending STORE",
    "preflight STORE",
)
#: The formats a command offers, read from its ``--help``.
_FORMATS = re.compile(r"--format \{([^}]*)\}")
#: A key in the JSON key style (camelCase; a dotted path of such names for a nested field's name).
CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
#: Maps whose keys are data, not field names: a property, a config model, counts by a name.
DATA_MAPS = {"properties", "model", "attributes", "counts", "recordKinds", "ranges", "byTopic", "topics",
             "queues", "groups", "byKind", "kinds", "bytesByKind", "files", "rocksdbMessageStore", "offsetTable",
             "recordVersions", "totalLag", "queueBytes"}
#: A raw epoch-ms time of these stores (2020 to 2033) where a person reads text.
RAW_MS = re.compile(r"(?<![\w.])1[5-9]\d{11}(?![\w.])")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$")


def _argv(spec: str, version: str) -> list[str]:
    root = store_path(version)
    seg = sorted((root / "commitlog").iterdir())[0]
    subst = {"STORE": str(root), "SEG": str(seg), "CP": str(root / "checkpoint")}
    return [subst.get(a, a) for a in spec.split()]


def _formats(capsys, command: str) -> list[str]:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    m = _FORMATS.search(capsys.readouterr().out.replace("\n", " "))
    return [f for f in m.group(1).split(",") if f in ("table", "text", "jsonl", "json")] if m else ["table"]


def _walk_keys(value, path=()):
    """Every (path, key) of the JSON value's objects, not descending into maps keyed by data."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k
            if k not in DATA_MAPS:
                yield from _walk_keys(v, (*path, k))
    elif isinstance(value, list):
        for v in value:
            yield from _walk_keys(v, path)


def _walk_values(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in DATA_MAPS:
                yield from _walk_values(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _walk_values(v, key)
    else:
        yield key, value


def _check_json_value(value, where: str) -> None:
    bad = [(p, k) for p, k in _walk_keys(value) if not CAMEL.match(k)]
    assert not bad, f"{where}: keys not in camelCase: {bad[:5]}"
    for key, v in _walk_values(value):
        if key.lower().endswith("offset"):
            assert v is None or isinstance(v, int), f"{where}: {key}={v!r} is not a decimal offset"
        if key.endswith(("Time", "Timestamp")):  # JSON gives a time as the epoch ms the files hold
            assert v is None or isinstance(v, int), f"{where}: {key}={v!r} is not epoch milliseconds"
        if isinstance(v, str):
            if key in ("time",) or key.endswith("TimeText"):
                assert v == "" or ISO.match(v) or "(out of range)" in v, f"{where}: {key}={v!r} is not ISO 8601"
            if key in ("text", "note", "finding", "detail", "reason"):
                assert not RAW_MS.search(v), f"{where}: raw epoch ms in {key}: {v!r}"


#: Commands whose JSON Lines mix several kinds of record: each line names its kind under ``"record"``,
#: the first being the command's own line (the store as a whole).
MIXED = {"inspect", "check", "config"}
#: Commands whose JSON Lines mix kinds of record without a line of their own.
KINDS = {"pending"}
#: A place in a file: ``FILE @ 0xHEX`` wherever an error, a finding or a notice names one.
DECIMAL_PLACE = re.compile(r"\S @ (?!0x[0-9a-f]+\b)")
#: Column names that are no JSON key of the same run: a table's own summary of values the JSON gives
#: whole (a share of the bytes, the flags of a lag row).
TABLE_ONLY = {"share", "flags"}


def _check_table(out: str, where: str) -> None:
    assert not RAW_MS.search(out), f"{where}: raw epoch ms in a table: {RAW_MS.search(out).group()}"
    for line in out.splitlines():
        for m in re.finditer(r"\b0x[0-9a-f]+\b", line):
            before = line[:m.start()].rstrip().rsplit(" ", 1)[-1]
            # hexadecimal only for what is an id, a hash or a magic code, never an offset
            assert not before.lower().endswith(("offset", "at", "byte")), f"{where}: hex offset: {line!r}"


def _all_keys(value) -> set[str]:
    """Every key of the JSON value's objects, at any depth."""
    if isinstance(value, dict):
        return set(value).union(*map(_all_keys, value.values()))
    if isinstance(value, list):
        return set().union(*map(_all_keys, value))
    return set()


@pytest.fixture
def headers(monkeypatch) -> list[list[str]]:
    """The header of every table with rows a command prints (plain and streamed), as it asked for it."""
    from rmqformats.cli import tables
    from rmqformats.export import TableStream
    seen: list[list[str]] = []
    plain, add, streamed = tables.print_table, tables.ColumnWidths.add, TableStream.__init__

    def print_table(rows, header, *args, **kwargs):
        if rows:
            seen.append(list(header))
        return plain(rows, header, *args, **kwargs)

    def add_row(self, row):
        seen.append(self.header)
        add(self, row)

    def table_stream(self, header, *args, **kwargs):
        seen.append(list(header))
        streamed(self, header, *args, **kwargs)

    monkeypatch.setattr(tables, "print_table", print_table)
    monkeypatch.setattr(tables.ColumnWidths, "add", add_row)
    monkeypatch.setattr(TableStream, "__init__", table_stream)
    return seen


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("spec", COMMANDS)
def test_every_command_follows_the_shared_rules(capsys, headers, version, spec):
    argv = _argv(spec, version)
    if "TopicMisc" in spec and version != "rocketmq-5.3.3":
        pytest.skip("TopicMisc is in the 5.3.3 store")
    command = argv[0]
    ran = 0
    keys: set[str] = set()
    documents: dict[str, object] = {}
    for fmt in _formats(capsys, command):
        code = main([*argv, "--format", fmt])
        out, err = capsys.readouterr()
        where = f"{' '.join(spec.split()[:1])} {version} --format {fmt}"
        assert code in (0, 1, 3), f"{where}: exit {code}: {err}"
        assert not DECIMAL_PLACE.search(err), f"{where}: a place not written FILE @ 0xHEX: {err!r}"
        if fmt == "jsonl":
            lines = out.splitlines()
            assert lines, where
            values = [json.loads(line) for line in lines]  # one JSON value per line, each line one value
            for value in values:
                _check_json_value(value, where)
            if command in KINDS:
                assert all(isinstance(v.get("record"), str) for v in values), where
            if command in MIXED:
                assert values[0]["record"] == command, f"{where}: the first line is not the {command!r} line"
                assert all(isinstance(v, dict) and isinstance(v.get("record"), str) for v in values), where
                # a row of a table is a line of its own, never a member of a list on the first line
                rows = [k for k, v in values[0].items() if isinstance(v, list) and v and isinstance(v[0], dict)]
                assert not rows, f"{where}: lists of records on the first line: {rows}"
            keys |= _all_keys(values)
            documents[fmt] = values
        elif fmt == "json":
            document = json.loads(out)  # one document
            _check_json_value(document, where)
            keys |= _all_keys(document)
            documents[fmt] = document
        else:
            _check_table(out, where)
            assert not DECIMAL_PLACE.search(out), f"{where}: a place not written FILE @ 0xHEX"
        ran += 1
    assert ran >= 2
    # A table's columns are named as the JSON keys of the same values (or the columnar names).
    # ``messages --columns`` takes the columnar names and the body's length, ``bodyBytes``.
    from rmqformats.cli.messages import BODY_BYTES
    from rmqformats.columnar import COLUMNS
    unnamed = {h for header in headers for h in header} - keys - {*COLUMNS, BODY_BYTES} - TABLE_ONLY
    assert not unnamed, f"{spec} {version}: columns no JSON key names: {sorted(unnamed)}"
    if command in MIXED and "json" in documents:
        _same_report(documents["jsonl"], documents["json"], f"{spec} {version}")


def _same_report(lines: list[dict], document: dict, where: str) -> None:
    """The JSON Lines of a report hold what its JSON document holds: the first line its values other
    than the lists, then a line per member of each list (``inspect``'s topics, a map keyed by name: a
    line per name; ``check``'s recovery plan: one line)."""
    head = {k: v for k, v in lines[0].items() if k != "record"}
    rest: dict[str, list[dict]] = {}
    for line in lines[1:]:
        rest.setdefault(line["record"], []).append({k: v for k, v in line.items() if k != "record"})
    expected = 1
    for key, value in document.items():
        if key in head:
            assert head[key] == value, f"{where}: {key}"
            continue
        if isinstance(value, list):
            rows = value
        elif key == "topics":
            rows = [{"topic": name, **v} for name, v in value.items()]
        else:
            rows = [value]
        expected += len(rows)
        assert not rows or rows in rest.values(), f"{where}: {key} is in no line"
    assert len(lines) == expected, where


def _columns(header: str) -> list[int]:
    """Display-cell positions where the header's columns start."""
    return [cells(header[:m.start()]) for m in re.finditer(r"\S+", header)]


def _cell_at(line: str, pos: int) -> tuple[str, str]:
    """The characters just before and at display cell ``pos`` of ``line``."""
    used, prev = 0, " "
    for c in line:
        if used >= pos:
            return prev, c
        used += cells(c)
        prev = c
    return prev, ""


def test_wide_characters_line_up_in_display_cells(capsys):
    """`标签` and `键一 键二` take two cells a character: every column starts at its header's cell."""
    root = store_path("rocketmq-5.3.3")
    for argv in (["messages", str(root), "--topic", "TopicMisc", "--wide"],
                 ["messages", str(root), "--topic", "TopicMisc", "--columns", "topic,tags,keys,queueOffset"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        header, *rows = out.splitlines()
        wide = [r for r in rows if "标签" in r]
        assert wide, out
        starts = _columns(header)
        for row in rows:
            for pos in starts[1:]:
                prev, at = _cell_at(row, pos)
                assert prev == " ", (row, pos)
        # the column after tags starts at the same cell in a row with wide characters as in the header
        keys_col = header.split().index("keys")
        pos = starts[keys_col]
        for row in wide:
            assert _cell_at(row, pos)[1] == "键", row


@pytest.mark.parametrize("seed", range(4))
def test_arrays_of_mixed_text_are_padded_and_cut_as_each_value_is(seed):
    """pad_array, cut_array and widest over arrays mixing plain ASCII with wide characters, combining marks,
    controls and nulls: each value as pad, cut_middle and cells make it (the plain ones by Arrow's
    kernels, the others a value at a time)."""
    import random

    from rmqformats.cells import cut_array, cut_middle, pad, pad_array, widest
    from rmqformats.frames import from_strings
    rnd = random.Random(seed)
    letters = ["a", "Z", "9", " ", "标", "键", "\u0301", "\x07", "é", "…", "\x7f"]
    for _ in range(300):
        values = [None if rnd.random() < 0.1 else
                  "".join(rnd.choice(letters if rnd.random() < 0.4 else letters[:4]) for _ in range(rnd.randrange(15)))
                  for _ in range(rnd.randrange(12))]
        arr, width = from_strings(values), rnd.randrange(12)
        assert pad_array(arr, width).to_pylist() == [None if v is None else pad(v, width) for v in values]
        assert cut_array(arr, width).to_pylist() == [None if v is None else cut_middle(v, width) for v in values]
        assert widest(arr) == max((cells(v) for v in values if v is not None), default=0)


def test_body_text_escapes_one_way_in_tables_and_json(capsys):
    from rmqformats.cli import bodies
    data = b"a\x00b\x92c\\d\te\xe6\xa0\x87"
    table = bodies.render(data, "text", None, table=True)
    assert table == bodies.render(data, "text", None) == "a\\x00b\\x92c\\\\d\\te标"
    assert bodies.json_fields(data, "text", None)["body"] == table


def test_control_characters_are_escaped_in_every_table_cell(capsys, monkeypatch):
    """A text with newlines (a decoded body, an SQL value) keeps its row on one line in a table, through each
    way a table is written (rows, columns, streamed), fitted or not; JSON Lines keep the text."""
    import io

    from rmqformats.cells import one_line
    from rmqformats.cli import tables
    from rmqformats.frames import from_strings
    text = "line 1\nline 2\r\tend\x01"
    assert one_line(text) == "line 1\\nline 2\\r\\tend\\x01" and one_line("plain \\ text") == "plain \\ text"
    for width in (None, 40):
        for write in (lambda out: tables.print_table([["a", text]], ["k", "v"], out, width=width),
                      lambda out: tables.print_columns([from_strings(["a"]), from_strings([text])], ["k", "v"], out,
                                                       width=width),
                      lambda out: tables.print_rows_streamed([["a", text]], ["k", "v"], out)):
            out = io.StringIO()
            write(out)
            assert len(out.getvalue().splitlines()) == 2, out.getvalue()
    root = store_path("rocketmq-5.1.4")
    monkeypatch.setenv("COLUMNS", "100")
    argv = ["messages", str(root), "--topic", "TopicTest", "--body-decoder", "text:utf-8", "--from-offset", "62689",
            "--limit", "1"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "\\n" in lines[1]
    assert main([*argv, "--format", "jsonl"]) == 0
    assert "\n" in json.loads(capsys.readouterr().out)["bodyDecoded"]


def test_lag_keeps_the_lag_column_when_narrowed(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    assert main(["lag", str(store_path("rocketmq-5.1.4"))]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[-1] == "lag"


@pytest.mark.parametrize("argv", [["inspect"], ["inspect", "--salvage"], ["messages"], ["messages", "--salvage"],
                                  ["check"], ["check", "--format", "jsonl"], ["preflight"], ["dump", "SEG"]])
def test_damage_is_placed_file_at_hex_by_every_command(capsys, store_copy, version, argv):
    """A record whose magic code is overwritten: every command that names the damage names it
    ``FILE @ 0xHEX`` (the segment, the record's byte in it), on stdout or stderr (there with the
    segment's whole path), never a decimal byte."""
    from conftest import truth_records
    rec = [t for t in truth_records(version) if t["kind"] == "MESSAGE"][10]
    segment = store_copy / "commitlog" / rec["file"]
    with open(segment, "r+b") as f:
        f.seek(rec["fileOffset"] + 4)
        f.write(b"\0\0\0\0")
    args = [str(segment) if a == "SEG" else a for a in argv[1:]]
    main([argv[0], *([] if "SEG" in argv else [str(store_copy)]), *args])
    out, err = capsys.readouterr()
    text = out + err
    assert not DECIMAL_PLACE.search(text) and " at byte " not in text, text[-2000:]
    if "jsonl" in argv:  # JSON keeps the numbers: the data end's segment and byte
        end = next(json.loads(line) for line in out.splitlines() if '"record": "recovery"' in line)["dataEnd"]
        assert (end["segment"], end["fileOffset"]) == (str(segment), rec["fileOffset"])
    else:
        assert f"{rec['file']} @ 0x{rec['fileOffset']:x}" in text, text[-2000:]
    if argv[0] in ("messages", "dump") or "--salvage" in argv:  # the notice on stderr: the whole path
        assert f"{segment} @ 0x{rec['fileOffset']:x}: " in err, err


@pytest.mark.parametrize("version", VERSIONS)
def test_messages_columns_take_body_bytes_as_the_table_shows_it(capsys, version):
    """``--columns bodyBytes``: the table's ``bodyBytes`` column and JSON's ``bodyBytes`` (``--body-limit``),
    the same number for every message, in a table and in JSON Lines, by the columnar scan and by the
    message-by-message search (``--key``) alike."""
    root = str(store_path(version))
    assert main(["messages", root, "--format", "jsonl", "--body-limit", "0"]) == 0
    lengths = {}
    for line in capsys.readouterr().out.splitlines():
        d = json.loads(line)
        lengths[d["commitLogOffset"]] = d.get("bodyBytes", 0)  # only where the limit cuts the body
    assert main(["messages", root, "--wide"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split()[-1] == "bodyBytes"
    table = {int(r.split()[0]): int(r.split()[-1]) for r in rows}
    assert table == lengths and len(set(table.values())) > 3
    assert main(["messages", root, "--columns", "commitLogOffset,bodyBytes,topic"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    assert header.split() == ["commitLogOffset", "bodyBytes", "topic"]
    assert {int(r.split()[0]): int(r.split()[1]) for r in rows} == lengths
    assert main(["messages", root, "--columns", "bodyBytes,commitLogOffset", "--format", "jsonl"]) == 0
    values = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all(list(v) == ["bodyBytes", "commitLogOffset"] for v in values)
    assert {v["commitLogOffset"]: v["bodyBytes"] for v in values} == lengths
    for fmt in ("jsonl", "table"):  # the message-by-message search
        assert main(["messages", root, "--topic", "TopicTest", "--key", "key-5", "--columns",
                     "commitLogOffset,bodyBytes", "--format", fmt]) == 0
        out = capsys.readouterr().out
        found = ({(d := json.loads(line))["commitLogOffset"]: d["bodyBytes"] for line in out.splitlines()}
                 if fmt == "jsonl" else {int(r.split()[0]): int(r.split()[1]) for r in out.splitlines()[1:]})
        assert found and all(lengths[o] == n for o, n in found.items()), found
    with pytest.raises(SystemExit):
        main(["messages", root, "--columns", "bodySize"])
    assert "bodyBytes" in capsys.readouterr().err


@pytest.mark.parametrize("version", VERSIONS)
def test_pending_json_times_are_the_epoch_ms_messages_gives(capsys, version):
    """``pending --format jsonl`` gives a time as every command's JSON does, epoch milliseconds: a
    scheduled or timer message's ``dueTime`` is the one ``messages --decode-system`` gives it."""
    root = str(store_path(version))
    assert main(["pending", root, "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    due = {r["commitLogOffset"]: r["dueTime"] for r in rows if r["record"] in ("scheduled", "timer")}
    assert main(["messages", root, "--decode-system", "--format", "jsonl"]) == 0
    decoded = {(d := json.loads(line))["commitLogOffset"]: d.get("dueTime")
               for line in capsys.readouterr().out.splitlines()}
    assert due and all(isinstance(v, int) and decoded[o] == v for o, v in due.items()), (due, version)


@pytest.mark.parametrize("seed", range(3))
def test_bodies_rendered_as_arrays_are_rendered_one_by_one(seed):
    """bodies.render_array (compiled, with Python's rule only for text with bytes over 0x7f) gives each body's
    bodies.render text: every view, limits that cut inside a character, in a table and in JSON."""
    import random

    import pyarrow as pa

    from rmqformats.cli import bodies
    rnd = random.Random(seed)
    pieces = [b"a", b"Z", b" ", b"\\", b"\t", b"\n", b"\r", b"\x00", b"\x7f", "标".encode(), b"\x92", b"\xe6",
              "é".encode(), "\u2028".encode(), b"x" * 5]
    for _ in range(150):
        values = [b"".join(rnd.choice(pieces if rnd.random() < 0.5 else pieces[:3]) for _ in range(rnd.randrange(12)))
                  for _ in range(rnd.randrange(1, 15))]
        arr = pa.array(values, pa.binary())
        for view in bodies.VIEWS:
            for limit in (None, 0, 1, 3, 7, 100):
                for table in (False, True):
                    assert bodies.render_array(arr, view, limit, table=table).to_pylist() == [
                        bodies.render(v, view, limit, table=table) for v in values], (view, limit, table, values)


@pytest.mark.parametrize("version", VERSIONS)
def test_body_views_in_json_lines_are_those_of_each_message(capsys, version):
    """``messages --format jsonl`` with ``--body`` and ``--body-limit`` (made from the columns) is each default
    line with its body's fields as bodies.apply_json makes them (the body's fields last)."""
    from rmqformats.cli import bodies
    root = str(store_path(version))
    assert main(["messages", root, "--format", "jsonl"]) == 0
    plain = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    data = [base64.b64decode(d["body"]) for d in plain]
    for view in (None, *bodies.VIEWS):
        for limit in (None, 0, 4, 40):
            if view in (None, "base64") and limit is None:
                continue
            argv = ["messages", root, "--format", "jsonl"] + (["--body", view] if view else []) + (
                ["--body-limit", str(limit)] if limit is not None else [])
            assert main(argv) == 0
            want = "".join(json.dumps(bodies.apply_json(dict(d), b, view, limit), ensure_ascii=False) + "\n"
                           for d, b in zip(plain, data))
            assert capsys.readouterr().out == want, argv

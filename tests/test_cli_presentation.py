"""Every command on every vector store, in each format it offers, held to the rules of
:mod:`rmqformats.cli.present`: one JSON key style, ISO 8601 times where a time is shown, decimal
offsets, one JSON value per line, and tables aligned in display cells with wide characters."""

from __future__ import annotations

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
        if isinstance(v, str):
            if key in ("time",) or key.endswith(("Time", "TimeText")) and not key.endswith("Ms"):
                assert v == "" or ISO.match(v) or "(out of range)" in v, f"{where}: {key}={v!r} is not ISO 8601"
            if key in ("text", "note", "finding", "detail", "reason"):
                assert not RAW_MS.search(v), f"{where}: raw epoch ms in {key}: {v!r}"


def _check_table(out: str, where: str) -> None:
    assert not RAW_MS.search(out), f"{where}: raw epoch ms in a table: {RAW_MS.search(out).group()}"
    for line in out.splitlines():
        for m in re.finditer(r"\b0x[0-9a-f]+\b", line):
            before = line[:m.start()].rstrip().rsplit(" ", 1)[-1]
            # hexadecimal only for what is an id, a hash or a magic code, never an offset
            assert not before.lower().endswith(("offset", "at", "byte")), f"{where}: hex offset: {line!r}"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("spec", COMMANDS)
def test_every_command_follows_the_shared_rules(capsys, version, spec):
    argv = _argv(spec, version)
    if "TopicMisc" in spec and version != "rocketmq-5.3.3":
        pytest.skip("TopicMisc is in the 5.3.3 store")
    ran = 0
    for fmt in _formats(capsys, argv[0]):
        code = main([*argv, "--format", fmt])
        out, err = capsys.readouterr()
        where = f"{' '.join(spec.split()[:1])} {version} --format {fmt}"
        assert code in (0, 1, 3), f"{where}: exit {code}: {err}"
        if fmt == "jsonl":
            lines = out.splitlines()
            assert lines, where
            for line in lines:  # one JSON value per line, each line one value
                _check_json_value(json.loads(line), where)
        elif fmt == "json":
            _check_json_value(json.loads(out), where)  # one document
        else:
            _check_table(out, where)
        ran += 1
    assert ran >= 2


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


def test_body_text_escapes_one_way_in_tables_and_json(capsys):
    from rmqformats.cli import bodies
    data = b"a\x00b\x92c\\d\te\xe6\xa0\x87"
    table = bodies.render(data, "text", None, table=True)
    assert table == bodies.render(data, "text", None) == "a\\x00b\\x92c\\\\d\\te标"
    assert bodies.json_fields(data, "text", None)["body"] == table

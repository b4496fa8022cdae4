"""The README: short, the two commands for a fresh machine first, and every command of its tour run here
with the lines it shows found, in order, in what the command prints."""

from __future__ import annotations

import re
import shlex

import pytest

from rmqformats.cli import main

import docpages

README = docpages.page("README.md")
#: The tour's command blocks: ``$ rmqformats …`` and lines of what it prints (some lines left out).
TOUR = [(m.group(1), [line for line in m.group(2).splitlines() if line])
        for m in re.finditer(r"```text\n\$ (rmqformats [^\n]*)\n(.*?)```", README, re.S)]


def test_the_readme_is_short_and_starts_with_the_two_commands():
    assert len(README.splitlines()) <= 250
    first_block = README.split("```sh\n", 1)[1].split("```", 1)[0]
    assert first_block.splitlines()[0].startswith("make setup && .venv/bin/rmqformats inspect --sample")
    assert first_block.splitlines()[1].startswith("make setup && make test")
    # The tasks of the tour, each with its command.
    for command in ("rmqformats inspect", "rmqformats lookup", "rmqformats messages", "rmqformats export",
                    "rmqformats check", "rmqformats preflight", "rmqformats rebuild", "rmqformats sql",
                    "spark/examples/consumer_lag.py", "make dist-parsers"):
        assert command in README, command


def test_the_tour_has_its_commands():
    assert len(TOUR) >= 8


def test_the_report_command_of_the_tour(capsys, tmp_path, monkeypatch):
    assert "`rmqformats report --sample -o report.html`" in README
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--sample", "-o", "report.html"]) == 0
    assert "309 message(s)" in capsys.readouterr().err
    assert (tmp_path / "report.html").stat().st_size > 10_000


@pytest.mark.parametrize("command,shown", TOUR, ids=[c for c, _ in TOUR])
def test_each_tour_command_prints_what_the_readme_shows(command, shown, capsys, tmp_path, monkeypatch):
    if command.startswith("rmqformats sql"):
        pytest.importorskip("duckdb", reason="rmqformats sql needs the [sql] extra (duckdb)")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)  # plain tables, as when piped
    code = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    assert code == 0, err
    printed = [line.rstrip() for line in (out + err).splitlines()]
    # Shown lines follow each other as printed, from the first line to the last, but where "…" marks
    # lines left out.
    at, gap = 0, False
    for line in shown:
        if line == "…":
            gap = True
            continue
        if gap:
            assert line.rstrip() in printed[at:], (line, printed)
            at = printed.index(line.rstrip(), at)
        else:
            assert printed[at:at + 1] == [line.rstrip()], (line, printed)
        at, gap = at + 1, False
    assert gap or at == len(printed), ("lines after the last one shown, without …", printed[at:])


def test_the_parser_packages_of_the_tour(tmp_path, capsys):
    """`make dist-parsers` prints one line per package written, as the README shows (every language is built
    and run by tests/test_dist_parsers.py; here the Python package, which needs no toolchain)."""
    from rmqformats.codegen import dist, docsite

    block = README.split("$ make dist-parsers\n", 1)[1].split("```", 1)[0]
    shown = dict(line.split(": ", 1) for line in block.splitlines() if line)
    assert set(shown) <= set(dist.LANGUAGES) and shown["python"] == "dist/parsers/python"
    if not (docsite.KSC / "node_modules" / "kaitai-struct-compiler").is_dir():
        pytest.skip("the pinned Kaitai compiler is not installed (make setup)")
    assert dist.main(["--out", str(tmp_path / "dist" / "parsers"), "--languages", "python"]) == 0
    assert capsys.readouterr().out.splitlines() == [f"python: {tmp_path / 'dist' / 'parsers' / 'python'}"]
    assert (tmp_path / "dist" / "parsers" / "python" / "README.md").is_file()

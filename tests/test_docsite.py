"""The documentation site: `make docs` builds it with --strict; the CLI reference has every option of every
command; each layout page has its diagram and its field table."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rmqformats.cli import build_parser
from rmqformats.codegen import docsite
from rmqformats.versions import annotations as ann

REPO = Path(__file__).resolve().parents[1]


def _need(what: str, present: bool, how: str) -> None:
    """Skip with one line naming what is missing; under CI (where CI is set), fail instead."""
    if present:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing: CI runs `{how}` first")
    pytest.skip(f"{what} is not installed (`{how}` installs it)")


def test_the_cli_reference_lists_every_option_of_every_command():
    parser = build_parser()
    text = docsite.cli_reference(parser)
    assert docsite.missing_options(text, parser) == []
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)][0].choices
    assert {"inspect", "messages", "export", "sql", "rebuild", "preflight", "schema-diff"} <= set(commands)
    for name in commands:
        assert f"\n## rmqformats {name}\n" in text, name
    # Help text with %(default)s is expanded as --help prints it.
    assert "%(default)" not in text
    # Descriptions and epilogs through each parser's own formatter, as --help shows them.
    assert "{columns}" not in text and "commitLogOffset, storeSize" in text
    assert "| 130 |" not in text and "130" in text.split("\n## rmqformats inspect\n")[0]


def test_an_option_missing_from_the_reference_is_found():
    parser = build_parser()
    text = docsite.cli_reference(parser)
    section = text.index("\n## rmqformats export\n")
    row = re.compile(r"^\| `--partition-by`.*$\n", re.M)
    cut = text[:section] + row.sub("", text[section:], count=1)
    assert docsite.missing_options(cut, parser) == ["rmqformats export --partition-by"]
    # An option added to a parser and not to the reference.
    extra = build_parser()
    [a for a in extra._actions if isinstance(a, argparse._SubParsersAction)][0].choices["lag"].add_argument(
        "--brand-new", help="x")
    assert docsite.missing_options(text, extra) == ["rmqformats lag --brand-new"]


@pytest.mark.parametrize("name", ann.ksy_names())
def test_each_layout_page_has_its_diagram_and_field_table(name):
    page = docsite.layout_page(name, ann.load())
    spec = ann.load_ksy(name)
    stem = Path(name).stem
    assert f"]({stem}.svg)" in page
    assert "| offset | field | type / width | meaning | since | until | Java name |" in page
    for field in spec.get("seq") or []:
        assert f"`{field['id']}`" in page, field["id"]
    assert "## Between releases" in page


def test_layout_offsets_follow_the_fixed_widths():
    page = docsite.layout_page("rocketmq_consumequeue.ksy", ann.load())
    rows = re.findall(r"^\| (\d+) \| `(\w+)`", page, re.M)
    assert ("0", "ofs_commitlog") in rows and ("8", "len_message") in rows and ("12", "tags_code") in rows, rows
    commitlog = docsite.layout_page("rocketmq_commitlog.ksy", ann.load())
    assert "| 28 | `sys_flag` |" in commitlog and "| 32 | `born_timestamp` |" in commitlog


def test_the_diagrams_are_drawn_by_the_compiler_and_graphviz(tmp_path):
    _need("Graphviz (dot)", shutil.which("dot") is not None, "make setup-docs")
    _need("the pinned Kaitai compiler", (docsite.KSC / "node_modules" / "kaitai-struct-compiler").is_dir(),
          "make setup")
    specs = [REPO / "formats" / "rocketmq_commitlog.ksy", REPO / "formats" / "rocketmq_timer_wheel.ksy"]
    docsite.draw(specs, tmp_path)
    for spec in specs:
        svg = (tmp_path / f"{spec.stem}.svg").read_text(encoding="utf-8")
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        for field in ann.load_ksy(spec.name).get("seq") or []:
            assert field["id"] in svg, (spec.name, field["id"])
    assert "len_record" in (tmp_path / "rocketmq_commitlog.svg").read_text(encoding="utf-8")


def test_make_docs_builds_the_site_strictly():
    _need("mkdocs (the docs extra)", importlib.util.find_spec("mkdocs") is not None
          and importlib.util.find_spec("mkdocstrings") is not None, "make setup-docs")
    _need("Graphviz (dot)", shutil.which("dot") is not None, "make setup-docs")
    proc = subprocess.run(["make", "-s", "docs"], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    site = REPO / "site"
    for page in ("index.html", "cli/index.html", "exit-statuses/index.html", "api/index.html",
                 "layouts/rocketmq_timer_wheel/index.html", "layouts/rocketmq_commitlog/index.html",
                 "releases/index.html", "benchmarks/index.html"):
        assert (site / page).is_file(), page
    assert (site / "layouts" / "rocketmq_timer_wheel.svg").read_text(encoding="utf-8").count("<svg") == 1
    html = (site / "layouts" / "rocketmq_commitlog" / "index.html").read_text(encoding="utf-8")
    assert 'src="../rocketmq_commitlog.svg"' in html and "len_record" in html
    assert "open_store" in (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "--partition-by" in (site / "cli" / "index.html").read_text(encoding="utf-8")


def test_every_hand_written_page_has_its_examples_run():
    """tests/docpages.py lists every page whose examples the tests run: a new page is listed there (and in the
    site's nav), so that its examples run too."""
    import docpages

    generated = {"docs/cli.md", "docs/releases.md", "docs/formats.md"}
    pages = {str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md")
             if not p.relative_to(REPO).parts[1] == "layouts"} - generated
    assert pages == set(docpages.PAGES) - {"README.md"}
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    for page in pages:
        assert page.removeprefix("docs/") in nav, page


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


BROWSER_SPECS = ("rocketmq_timer_wheel", "rocketmq_commitlog")


@pytest.fixture(scope="module")
def browser_site(tmp_path_factory):
    """The site built once, with the diagrams of BROWSER_SPECS drawn (the others' pages only)."""
    browser = _chromium()
    _need("chromium", browser is not None, "make setup-browser")
    _need("Graphviz (dot)", shutil.which("dot") is not None, "make setup-docs")
    _need("mkdocs (the docs extra)", importlib.util.find_spec("mkdocs") is not None, "make setup-docs")
    tmp_path = tmp_path_factory.mktemp("site")
    site = tmp_path / "site"
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs, ignore=shutil.ignore_patterns("layouts"))
    docsite.generate(docs, diagrams=False)
    docsite.draw([REPO / "formats" / f"{spec}.ksy" for spec in BROWSER_SPECS], docs / "layouts")
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("strict: true", "strict: false")
    config = config.replace('paths: ["."]', f'paths: ["{REPO}"]').replace('base_path: ["."]', f'base_path: ["{REPO}"]')
    (tmp_path / "mkdocs.yml").write_text(config, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(site)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return browser, site


@pytest.mark.parametrize("spec", BROWSER_SPECS)
def test_layout_pages_in_headless_chromium(spec, browser_site, tmp_path, capsys):
    """The page as a reader sees it: the diagram loads as an image (its natural size read by a script in the
    page) beside the field table; a screenshot is written."""
    browser, site = browser_site
    page = site / "layouts" / spec / "index.html"
    html = page.read_text(encoding="utf-8")
    probe = ("<script>window.addEventListener('load', () => { const i = document.querySelector('img[src$=\".svg\"]');"
             " document.body.setAttribute('data-svg', i && i.complete ? i.naturalWidth + 'x' + i.naturalHeight"
             " : 'none'); });</script></body>")
    page.write_text(html.replace("</body>", probe, 1), encoding="utf-8")
    common = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
              "--disable-extensions", "--disable-background-networking",
              f"--user-data-dir={tmp_path / 'chromium-profile'}"]
    dom = subprocess.run([*common, "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=180).stdout
    size = re.search(r'data-svg="(\d+)x(\d+)"', dom)
    assert size is not None, re.search(r"<body[^>]*>", dom)
    assert int(size.group(1)) > 200 and int(size.group(2)) > 100, size.group(0)
    assert "| offset |" not in dom and "<th>offset</th>" in dom  # the field table is rendered as a table
    shot = tmp_path / f"{spec}.png"
    subprocess.run([*common, "--window-size=1400,2400", "--virtual-time-budget=5000", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, text=True, timeout=180)
    assert shot.is_file() and shot.stat().st_size > 20_000
    with capsys.disabled():
        print(f"\n{spec} page screenshot: {shot}")

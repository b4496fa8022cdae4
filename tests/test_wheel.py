"""The wheel works on its own: built from the tracked files, installed into a fresh venv with the core dependencies.

The sdist and the wheels are built from a copy of the files git tracks
(``tools/dist_python.py``, what ``make dist`` runs), so nothing untracked can
leak in. The wheel goes into a new venv (no dev tools, the checkout not on
``sys.path``, commands run in a folder outside it) where every module is
imported, ``help(rmqformats)`` runs and every command of the CLI runs on the
bundled sample and on a vector store, compared with RocketMQ's ground truth.
Last, the ``[pandas]`` extra is installed and the README's Python examples run,
then (where the Spark extra is installed for the tests) the ``[spark]`` extra
and the README's ``spark-submit`` line from a checkout's root. One venv serves
the whole module; the tests run in file order, the extras last.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from conftest import FIXTURES, store_path, truth_records
import docpages

ROOT = Path(__file__).resolve().parent.parent
VECTOR = "rocketmq-5.3.3"
SAMPLE = "rocketmq-5.1.4"  # the bundled sample is this vector's store

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="builds from the files git tracks: needs git and a checkout")


def _dist_python():
    spec = importlib.util.spec_from_file_location("dist_python", ROOT / "tools" / "dist_python.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """The sdist, the wheel built from it and a wheel built straight from the tree, all from the tracked files."""
    dist = _dist_python()
    tmp = tmp_path_factory.mktemp("dist")
    src = dist.copy_tracked(ROOT, tmp / "src")
    sdist_and_wheel = dist.build(src, tmp / "out")
    direct = dist.build(src, tmp / "direct", wheel_only=True)
    [sdist] = [p for p in sdist_and_wheel if p.name.endswith(".tar.gz")]
    [wheel] = [p for p in sdist_and_wheel if p.name.endswith(".whl")]
    [direct_wheel] = direct
    return {"src": src, "sdist": sdist, "wheel": wheel, "direct_wheel": direct_wheel}


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


class Venv:
    """A fresh venv holding the wheel and its core dependencies, and a work folder outside the checkout."""

    def __init__(self, path: Path, work: Path) -> None:
        self.path, self.work = path, work
        self.python = str(path / "bin" / "python")
        self.cli = str(path / "bin" / "rmqformats")

    def run(self, *args: str, cwd: Path | None = None, ok: tuple[int, ...] = (0,), env: dict | None = None,
            traceback: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run(list(args), cwd=cwd or self.work, capture_output=True, text=True,
                              env=_clean_env(**(env or {})), timeout=600)
        assert proc.returncode in ok, f"{args}: status {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        assert traceback or "Traceback" not in proc.stderr, proc.stderr
        return proc

    def rmq(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
        return self.run(self.cli, *args, ok=ok)

    def py(self, code: str, **kw) -> subprocess.CompletedProcess:
        return self.run(self.python, "-c", code, **kw)

    def pip(self, *args: str) -> None:
        self.run(self.python, "-m", "pip", "install", "--quiet", *args)


@pytest.fixture(scope="module")
def env(built, tmp_path_factory) -> Venv:
    base = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(base / "venv")
    (base / "work").mkdir()
    v = Venv(base / "venv", base / "work")
    v.pip(str(built["wheel"]))
    return v


def _wheel_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        return sorted(n for n in z.namelist() if ".dist-info/" not in n)


def test_the_sdist_builds_the_same_wheel(built):
    names = _wheel_names(built["wheel"])
    assert names == _wheel_names(built["direct_wheel"])
    # Every tracked file of the package folders is in it, and nothing else.
    src = built["src"]
    expected = set()
    for pkg, folder in (("rmqformats", "rmqformats"), ("rmqformats/generated", "generated"),
                        ("rmqformats/spark", "spark"), ("rmqformats/formats", "formats")):
        for p in (src / folder).rglob("*"):
            rel = p.relative_to(src / folder)
            if p.is_file():
                expected.add(f"{pkg}/{rel.as_posix()}")
    assert set(names) == expected, (sorted(set(names) - expected), sorted(expected - set(names)))
    for must in ("rmqformats/generated/kaitai/rocketmq_commitlog.py", "rmqformats/formats/releases.yaml",
                 "rmqformats/formats/rocketmq_timer_wheel.ksy", "rmqformats/formats/config/topics.schema.json",
                 "rmqformats/samples/rocketmq-5.1.4/store/commitlog/00000000000000000000", "rmqformats/py.typed",
                 "rmqformats/spark/examples/topic_hourly.py"):
        assert must in names


def test_only_the_core_dependencies_are_installed(env, built):
    listed = {d["name"].lower() for d in json.loads(env.run(env.python, "-m", "pip", "list", "--format",
                                                            "json").stdout)}
    assert {"rmqformats", "pyyaml", "kaitaistruct", "pyarrow", "numba", "rocksdict"} <= listed
    assert not listed & {"pytest", "pandas", "pyspark", "mypy", "hypothesis", "build"}, listed
    meta = env.py("from importlib.metadata import metadata; m = metadata('rmqformats'); "
                  "print(m.get_all('Provides-Extra'))").stdout
    assert "pandas" in meta and "spark" in meta


def test_every_module_imports_from_the_install(env):
    """Each module of the installed package imports with the core dependencies alone; the Spark adapter says
    which extra it needs."""
    code = r"""
import importlib, json, pkgutil, rmqformats
out = {"file": rmqformats.__file__, "ok": [], "failed": {}}
for m in pkgutil.walk_packages(rmqformats.__path__, "rmqformats.", onerror=lambda name: None):
    if m.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(m.name)
        out["ok"].append(m.name)
    except Exception as exc:
        out["failed"][m.name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""
    out = json.loads(env.py(code).stdout)
    assert out["file"].startswith(str(env.path)), out["file"]
    assert len(out["ok"]) > 100 and "rmqformats.generated.kaitai.rocketmq_commitlog" in out["ok"]
    assert "rmqformats.versions.releases" in out["ok"] and "rmqformats.cli.schema" in out["ok"]
    assert set(out["failed"]) == {"rmqformats.spark"}, out["failed"]
    assert "pip install 'rmqformats[spark]'" in out["failed"]["rmqformats.spark"]


def test_help_of_the_package(env):
    out = env.py("import rmqformats; help(rmqformats)", env={"PAGER": "cat", "TERM": "dumb"}).stdout
    assert "open_store" in out and "Readers for Apache RocketMQ broker store files" in out
    assert str(env.path) in out  # FILE: the installed package, not a checkout


def test_to_pandas_names_the_extra(env):
    proc = env.py("import rmqformats; rmqformats.open_store(rmqformats.sample_store_path()).commitlog.to_pandas()",
                  ok=(1,), traceback=True)
    assert "pip install 'rmqformats[pandas]'" in proc.stderr


# The CLI: every command once on the sample (--sample where a command takes it) and on a vector store.

COMMANDS = ["inspect", "messages", "export", "queue", "lookup", "check", "config", "lag", "dump", "cut",
            "report", "tiered", "dledger", "compaction", "schema-diff", "schema", "preflight", "rebuild", "sql", "pending"]


def test_the_cli_has_the_commands_run_here(env):
    usage = env.rmq("--help").stdout
    assert set(re.search(r"\{([a-z,-]+)\}", usage).group(1).split(",")) == set(COMMANDS)


def test_sql_names_the_extra(env):
    """Without the sql extra, ``sql`` is one line naming it, exit 2."""
    proc = env.rmq("sql", "--sample", "SELECT count(*) FROM messages", ok=(2,))
    assert proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "pip install 'rmqformats[sql]'" in proc.stderr


def _messages(version: str) -> list[dict]:
    return [t for t in truth_records(version) if t["kind"] == "MESSAGE"]


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module", params=["sample", VECTOR])
def store(request, env) -> tuple[list[str], Path, str]:
    """The STORE arguments, the store root and the vector whose truth it has."""
    if request.param == "sample":
        root = Path(env.py("import rmqformats; print(rmqformats.sample_store_path())").stdout.strip())
        assert root.is_relative_to(env.path)
        return ["--sample"], root, SAMPLE
    return [str(store_path(VECTOR))], store_path(VECTOR), VECTOR


def test_store_commands(env, store, tmp_path):
    args, root, version = store
    truth = _messages(version)

    inspect = json.loads(env.rmq("inspect", *args, "--format", "json").stdout)
    assert inspect["messages"] == len(truth)
    assert inspect["dataEnd"]

    msgs = _jsonl(env.rmq("messages", *args, "--format", "jsonl").stdout)
    assert [m["msgId"] for m in msgs] == [t["msgId"] for t in truth]
    assert [m["commitLogOffset"] for m in msgs] == [t["commitlogOffset"] for t in truth]

    out = tmp_path / "parquet"
    env.rmq("export", *args, "--to", "parquet", str(out))
    rows = env.py(f"import pyarrow.parquet as pq; print(pq.read_table({str(out)!r}).num_rows)").stdout
    assert int(rows) == len(truth)

    queues = _jsonl(env.rmq("queue", *args, "--format", "jsonl").stdout)
    cq_truth = json.loads((FIXTURES / version / "truth" / "consumequeue.json").read_text())
    plain = {(q["topic"], q["queueId"]) for q in queues if q["type"] == "ConsumeQueue"}
    assert plain == {(t, int(q)) for t, qs in cq_truth.items() for q in qs}
    units = _jsonl(env.rmq("queue", *args, "TopicTest", "0", "--format", "jsonl").stdout)
    assert [(u["cqOffset"], u["commitLogOffset"], u["size"], u["tagsCode"]) for u in units] == [
        (u["cqIndex"], u["commitlogOffset"], u["size"], u["tagsCode"]) for u in cq_truth["TopicTest"]["0"]["units"]]

    queries = json.loads((FIXTURES / version / "truth" / "index.json").read_text())["queries_topic#key_to_phyOffsets"]
    key = next(k for k in sorted(queries) if k.startswith("TopicTest#key-"))
    hits = _jsonl(env.rmq("lookup", *args, "--topic", "TopicTest", "--key", key.split("#", 1)[1],
                          "--format", "jsonl").stdout)
    assert sorted(h["commitLogOffset"] for h in hits) == sorted(queries[key]) and all(h["keyMatches"] for h in hits)

    check = json.loads(env.rmq("check", *args, "--format", "json").stdout)
    assert check["ok"] is True and check["messages"] == len(truth) and check["problems"] == []

    config = json.loads(env.rmq("config", *args, "--format", "json").stdout)
    names = {f["name"] for f in config["files"]}
    assert {"topics.json", "consumerOffset.json"} <= names and all(f["valid"] for f in config["files"])

    proc = env.rmq("lag", *args, "--format", "jsonl", ok=(0, 1))  # 1: a queue is flagged (5.3.3: beyondMax)
    lag = _jsonl(proc.stdout)
    assert (proc.returncode == 1) == any(r["beyondMax"] or r["behindMin"] or r["behindCommitLog"] for r in lag)
    # fastjson writes queue ids as unquoted keys: quote them for the json module.
    text = re.sub(r'([{,]\s*)(\d+):', r'\1"\2":', (root / "config" / "consumerOffset.json").read_text())
    offsets = json.loads(text)["offsetTable"]
    committed = {(key.split("@")[1], key.split("@")[0], int(q)): o for key, qs in offsets.items() for q, o in qs.items()}
    assert {(r["group"], r["topic"], r["queueId"]): r["committedOffset"] for r in lag} == committed

    segment = root / "commitlog" / "00000000000000000000"
    [summary] = json.loads(env.rmq("dump", str(segment), "--summary", "--format", "json").stdout)
    in_first = [t for t in truth_records(version) if t["file"] == segment.name]
    assert summary["records"] == len(in_first)
    assert summary["recordKinds"] == dict(Counter(t["kind"] for t in in_first))

    piece = tmp_path / "piece"
    env.rmq("cut", str(segment), "--records", "5", "-o", str(piece))
    assert piece.read_bytes() == segment.read_bytes()[:sum(t["totalSize"] for t in in_first[:5])]

    page = tmp_path / "report.html"
    report = env.rmq("report", *args, "-o", str(page), ok=(0, 1))  # 1: the rows lag flags, as lag exits
    assert report.returncode == proc.returncode
    html = page.read_text(encoding="utf-8")
    assert "plotly" in html.lower() and "TopicTest" in html


def test_pending(env):
    """pending from the installed package lists what the checkout's command lists."""
    root = store_path(VECTOR)
    installed = env.rmq("pending", str(root), "--format", "jsonl").stdout
    here = subprocess.run([sys.executable, "-m", "rmqformats", "pending", str(root), "--format", "jsonl"],
                          capture_output=True, text=True, check=True).stdout
    assert installed == here and _jsonl(installed)


def test_preflight_and_rebuild(env, tmp_path):
    """preflight says the broker starts cleanly on the vector store (notes of the release followed aside);
    rebuild writes a store whose queues and index files equal the broker's, on which preflight says the same."""
    root = store_path(VECTOR)
    before = json.loads(env.rmq("preflight", str(root), "--json").stdout)
    assert before["exit"] == 0 and all(i["verdict"] == "note" for i in before["items"])
    new = tmp_path / "rebuilt"
    done = json.loads(env.rmq("rebuild", str(root), "--out", str(new), "--json").stdout)
    assert done["messages"] == len(_messages(VECTOR)) and (new / "_SUCCESS").is_file()
    for queue in sorted((root / "consumequeue").glob("*/*/*")):
        assert (new / queue.relative_to(root)).read_bytes() == queue.read_bytes()
    after = json.loads(env.rmq("preflight", str(new), "--json").stdout)
    assert after["exit"] == 0 and after["dataEnd"] == before["dataEnd"]


def test_layout_commands(env, tmp_path):
    """tiered, dledger and compaction, on stores of those layouts made from the vector's records."""
    from layoutstores import compaction_store, dledger_store, tiered_store

    truth = _messages(VECTOR)
    root, entries, _ = dledger_store(VECTOR, tmp_path / "dledger")
    rows = _jsonl(env.rmq("dledger", str(root), "--format", "jsonl").stdout)
    assert len(rows) == len(entries) == len(truth)

    root, base, moved = tiered_store(VECTOR, tmp_path / "tiered")
    queues = _jsonl(env.rmq("tiered", str(base), "--store", str(root), "--format", "jsonl").stdout)
    assert sum(q["messages"] for q in queues) == len(moved)

    root, _, queue_messages = compaction_store(VECTOR, tmp_path / "compaction")
    listed = _jsonl(env.rmq("compaction", str(root), "--format", "jsonl").stdout)
    assert listed and listed[0]["topic"] == "TopicTest"
    rows = _jsonl(env.rmq("compaction", str(root), "--topic", "TopicTest", "--queue", "0", "--format",
                          "jsonl").stdout)
    assert len(rows) == len(queue_messages)


def test_schema_commands(env, tmp_path):
    diff = env.rmq("schema-diff", "4.5.2", "4.6.0", ok=(1,)).stdout
    assert "FIELD_WIDTH_CHANGED" in diff and "rocketmq_commitlog: INCOMPATIBLE" in diff
    out = tmp_path / "specs"
    env.rmq("schema", "export", "--version", "5.3.3", str(out))
    specs = sorted(p.name for p in out.glob("*.ksy"))
    assert "rocketmq_commitlog.ksy" in specs and "rocketmq_timer_wheel.ksy" in specs
    assert (out / "config" / "topics.schema.json").is_file()
    # Each exported spec is YAML whose id is its file name (pyyaml is a core dependency).
    ids = env.py(f"import yaml, pathlib; print(sorted(p.name for p in pathlib.Path({str(out)!r}).glob('*.ksy') "
                 f"if yaml.safe_load(p.read_text())['meta']['id'] + '.ksy' == p.name))").stdout
    assert ids.strip() == str(specs)


def test_a_source_checkout_root_as_working_folder(env, built):
    """Run in a checkout's root, ``python -m`` and ``python -c`` put the root first on ``sys.path`` (as Spark's
    Python workers do): the source folder is imported instead of the install, and must still find
    ``generated/``, ``spark/`` and ``formats/``."""
    src = built["src"]
    out = env.run(env.python, "-c", "import rmqformats, rmqformats.generated.kaitai.rocketmq_commitlog as k, "
                                    "rmqformats.versions.releases as r; print(rmqformats.__file__); print(k.__file__); "
                                    "print(r.newest())", cwd=src).stdout.split()
    assert out[0] == str(src / "rmqformats" / "__init__.py")
    assert out[1] == str(src / "generated" / "kaitai" / "rocketmq_commitlog.py")
    inspect = json.loads(env.run(env.python, "-m", "rmqformats", "inspect", "--sample", "--format", "json",
                                 cwd=src).stdout)
    assert inspect["messages"] == len(_messages(SAMPLE))


def _readme_examples() -> str:
    """The Python examples of the README and the site's pages but the Spark and SQL ones (their extras;
    tests/test_sql.py runs the SQL ones), in order, on the bundled sample."""
    blocks = docpages.python_blocks()
    code = "\n".join(b for b in blocks if "spark" not in b.lower() and ".sql(" not in b)
    assert '"/data/rocketmq/store"' in code
    return code.replace('"/data/rocketmq/store"', "rmqformats.sample_store_path()")


def test_readme_python_examples_with_the_pandas_extra(env, built):
    env.pip(f"{built['wheel']}[pandas]")
    script = env.work / "readme_examples.py"
    script.write_text(_readme_examples())
    out = env.run(env.python, str(script)).stdout
    assert "TopicTest" in out and "zero-filled tail" in out


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None,
                    reason="the Spark extra is not installed here (make setup-spark)")
def test_spark_submit_from_the_checkout_root(env, built):
    """The README's spark-submit line, run in a checkout's root with the wheel's [spark] extra installed: Spark's
    Python workers run ``python -m pyspark.daemon`` there and import the source folder."""
    env.pip(f"{built['wheel']}[spark]")
    src = built["src"]
    proc = env.run(str(env.path / "bin" / "spark-submit"), "--master", "local[2]",
                   "--conf", f"spark.pyspark.python={env.python}", "spark/examples/consumer_lag.py", cwd=src,
                   env={"PATH": f"{env.path / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"})
    rows = re.findall(r"^\|(\S+)\s*\|(\S+)\s*\|(\d+)\s*\|(\d+)\s*\|(\d+)\s*\|(\d+)\s*\|$", proc.stdout, re.M)
    lag = _jsonl(env.rmq("lag", "--sample", "--format", "jsonl").stdout)
    assert sorted((g, t, int(q), int(c), int(m), int(n)) for g, t, q, c, m, n in rows) == sorted(
        (r["group"], r["topic"], r["queueId"], r["committedOffset"], r["maxOffset"], r["lag"]) for r in lag)

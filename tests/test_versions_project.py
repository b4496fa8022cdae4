"""`schema export`: the specs projected onto one release compile to Python and JavaScript and parse
that release's vector store, checked against RocketMQ's own decoders (truth/)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, store_path, truth_records
from rmqformats.cli import main
from rmqformats.codegen.__main__ import compile_ksy
from rmqformats.versions.project import export, project

REPO = Path(__file__).resolve().parents[1]
KSC = REPO / "tools" / "ksc"
COMMITLOG = yaml.safe_load((REPO / "formats" / "rocketmq_commitlog.ksy").read_text())


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(f"_projected_{path.parent.name}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """release -> (folder of projected .ksy, folder of Python parsers, folder of JavaScript parsers)."""
    out = {}
    for release in ("4.5.2", "4.9.7", "5.1.4", "5.3.3"):
        root = tmp_path_factory.mktemp(f"r{release.replace('.', '_')}")
        specs = export(release, root / "ksy", schemas=False)
        compile_ksy("python", specs, root / "py", KSC)
        compile_ksy("javascript", specs, root / "js", KSC)
        out[release] = (root / "ksy", root / "py", root / "js")
    return out


def test_export_leaves_out_kinds_the_release_does_not_write(compiled):
    names = lambda r: sorted(p.name for p in compiled[r][0].glob("*.ksy"))  # noqa: E731
    assert "rocketmq_batch_consumequeue.ksy" not in names("4.9.7")
    assert "rocketmq_timer_log.ksy" not in names("4.5.2")
    assert "rocketmq_batch_consumequeue.ksy" in names("5.1.4") and "rocketmq_timer_wheel.ksy" in names("5.3.3")
    assert len(list(compiled["5.3.3"][1].glob("*.py"))) == len(names("5.3.3"))
    assert len(list(compiled["5.3.3"][2].glob("*.js"))) == len(names("5.3.3"))


def test_projection_to_4_5_2_has_no_ipv6_flags_and_no_v2_case():
    spec = project(COMMITLOG, "4.5.2")
    text = yaml.safe_dump(spec)
    sys_flag = spec["types"]["sys_flag"]["seq"]
    ids = [f["id"] for f in sys_flag]
    assert "is_born_host_v6" not in ids and "is_store_host_v6" not in ids
    assert "compression_type" not in ids and "is_inner_batch" not in ids and "needs_unwrap" not in ids
    assert sum(int(f["type"][1:]) for f in sys_flag) == 32  # the remaining bits keep their places
    assert sys_flag[0] == {**sys_flag[0], "id": "reserved", "type": "b28"}
    assert spec["types"]["record"]["seq"][2]["type"] == "message"
    assert list(spec["types"]["message"]["seq"][14]["type"]["cases"]) == ["_"]  # V1 is the default case
    assert spec["types"]["message"]["instances"]["is_v2"]["value"] is False
    assert -626843477 not in spec["enums"]["magic_code"]  # MESSAGE_MAGIC_CODE_V2
    assert set(spec["enums"]["compression_type"]) == {0}
    assert spec["types"]["message"]["seq"][7]["type"] == "host_v4"
    assert "v6" not in spec["types"]["sys_flag"]["-webide-representation"]
    assert "-rmq-since" not in text and "-rmq-before" not in text and "-rmq-cases" not in text
    exprs = [str(v) for t in spec["types"].values() for f in [*t.get("seq", []), *t.get("instances", {}).values()]
             for k, v in f.items() if k in ("type", "value", "if", "size")]
    assert not [e for e in exprs if "message_v2" in e or "host_v6" in e]
    assert spec["-rmq-release"] == "4.5.2"


def test_projection_to_5_3_3_has_everything():
    spec = project(COMMITLOG, "5.3.3")
    ids = [f["id"] for f in spec["types"]["sys_flag"]["seq"]]
    for flag in ("is_born_host_v6", "is_store_host_v6", "compression_type", "is_inner_batch", "needs_unwrap"):
        assert flag in ids
    assert spec["types"]["sys_flag"]["seq"][0]["type"] == "b21"
    assert set(spec["types"]["message"]["seq"][14]["type"]["cases"]) == {"_", "magic_code::message_v2"}
    assert -626843477 in spec["enums"]["magic_code"] and set(spec["enums"]["compression_type"]) == {0, 1, 2, 3}
    assert spec["types"]["message"]["seq"][7]["type"] == {
        "switch-on": "born_host_v6", "cases": {True: "host_v6", False: "host_v4"}}


def test_projection_of_the_checkpoint_follows_its_fields():
    spec = yaml.safe_load((REPO / "formats" / "rocketmq_checkpoint.ksy").read_text())
    ids = lambda r: [f["id"] for f in project(spec, r)["seq"]]  # noqa: E731
    assert ids("4.9.7")[3:] == ["reserved"]
    assert ids("5.0.0")[3:] == ["ofs_master_flushed", "reserved"]
    assert ids("5.1.1")[3:] == ["ofs_master_flushed", "ofs_confirm_phy", "reserved"]


@pytest.mark.parametrize("release", ["4.9.7", "5.1.4", "5.3.3"])
def test_projected_python_parsers_read_the_release_store(compiled, release):
    _, py, _ = compiled[release]
    store = store_path(f"rocketmq-{release}")
    cl = _load(py / "rocketmq_commitlog.py", "commitlog").RocketmqCommitlog
    truth = defaultdict(list)
    for t in truth_records(f"rocketmq-{release}"):
        if t["kind"] == "MESSAGE":
            truth[t["file"]].append(t)
    for segment in sorted((store / "commitlog").iterdir()):
        parsed = cl.from_file(str(segment))
        try:
            got = [(r.body.topic, r.body.queue_offset, r.len_record, r.body.born_host.port,
                    r.body.sys_flag.is_born_host_v6 if release != "4.5.2" else False)
                   for r in parsed.records if r.is_message]
        finally:
            parsed.close()
        want = [(t["topic"], t["queueOffset"], t["totalSize"], t["bornPort"], bool(t["sysFlag"] & 0x10))
                for t in truth[segment.name]]
        assert got == want, segment.name
    cp = _load(py / "rocketmq_checkpoint.py", "checkpoint").RocketmqCheckpoint.from_file(str(store / "checkpoint"))
    want = json.loads((FIXTURES / f"rocketmq-{release}" / "truth" / "checkpoint.json").read_text())
    assert (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp) == (
        want["physicMsgTimestamp"], want["logicsMsgTimestamp"], want["indexMsgTimestamp"])
    assert hasattr(cp, "ofs_confirm_phy") == (release != "4.9.7")
    if release != "4.9.7":
        assert cp.ofs_confirm_phy == want["confirmPhyOffset"] and cp.ofs_master_flushed == want["masterFlushedOffset"]
        bcq = _load(py / "rocketmq_batch_consumequeue.py", "bcq").RocketmqBatchConsumequeue
        truth_bcq = json.loads((FIXTURES / f"rocketmq-{release}" / "truth" / "batchconsumequeue.json").read_text())
        for topic, queues in truth_bcq.items():
            for qid, q in queues.items():
                for name in q["files"]:
                    parsed = bcq.from_file(str(store / "batchconsumequeue" / topic / qid / name))
                    want_units = [u for u in q["units"] if u["file"] == name]
                    assert [(u.ofs_commitlog, u.len_message) for u in parsed.units][:len(want_units)] == [
                        (u["commitlogOffset"], u["size"]) for u in want_units]
                    assert want_units
                    parsed.close()


def test_projected_javascript_parser_reads_the_release_store(compiled):
    env = {"NODE_PATH": str(KSC / "node_modules"), "PATH": "/usr/bin:/bin:/usr/local/bin"}
    for release in ("4.9.7", "5.1.4", "5.3.3"):
        js = compiled[release][2] / "RocketmqCommitlog.js"
        folder = store_path(f"rocketmq-{release}") / "commitlog"
        script = f"""
            const fs = require('fs');
            const KaitaiStream = require('kaitai-struct/KaitaiStream');
            const R = require({str(js)!r}).RocketmqCommitlog;
            const out = [];
            for (const name of fs.readdirSync({str(folder)!r}).sort()) {{
              const r = new R(new KaitaiStream(fs.readFileSync({str(folder)!r} + '/' + name)));
              for (const rec of r.records) if (rec.isMessage)
                out.push([R.MagicCode[rec.magic], rec.body.topic, rec.body.queueOffset]);
            }}
            console.log(JSON.stringify(out));
        """
        proc = subprocess.run(["node", "-e", script], capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        want = [["MESSAGE_V2" if t["magicCodeHex"] == "0xDAA320AB" else "MESSAGE_V1", t["topic"], t["queueOffset"]]
                for t in truth_records(f"rocketmq-{release}") if t["kind"] == "MESSAGE"]
        assert got == want, release
        kinds = Counter(k for k, _, _ in got)
        assert ("MESSAGE_V2" in kinds) == (release != "4.9.7")


def test_cli_export(tmp_path, capsys):
    assert main(["schema", "export", "--version", "4.5.2", str(tmp_path / "out")]) == 0
    written = capsys.readouterr().out.split()
    assert sorted(written) == sorted(str(p) for p in (tmp_path / "out").rglob("*") if p.is_file()
                                     and p.name != "_SUCCESS")
    assert (tmp_path / "out" / "_SUCCESS").exists()
    names = {Path(p).name for p in written}
    assert "rocketmq_commitlog.ksy" in names and "topics.schema.json" in names
    assert "rocketmq_batch_consumequeue.ksy" not in names and "timermetrics.schema.json" not in names


def _config_errors(folder: Path, schema_name: str, data_file: Path) -> list[str]:
    """Validation errors of a store config file against an exported schema, beans closed to unknown keys."""
    import jsonschema
    from referencing import Registry, Resource

    from rmqformats.config import fastjson

    def closed(node):
        if isinstance(node, dict):
            out = {k: closed(v) for k, v in node.items()}
            if "properties" in out and "additionalProperties" not in out and "x-java-class" in out:
                out["additionalProperties"] = False
            return out
        if isinstance(node, list):
            return [closed(v) for v in node]
        return node

    schemas = {p.name: closed(json.loads(p.read_text())) for p in (folder / "config").glob("*.schema.json")}
    registry = Registry().with_resources(
        (s["$id"], Resource.from_contents(s)) for s in schemas.values())
    validator = jsonschema.Draft202012Validator(schemas[schema_name], registry=registry)

    def strkeys(v):
        if isinstance(v, dict):
            return {str(k): strkeys(x) for k, x in v.items()}
        if isinstance(v, list):
            return [strkeys(x) for x in v]
        return v

    value = strkeys(fastjson.parse(data_file.read_text(encoding="utf-8")).value)
    return sorted(e.message for e in validator.iter_errors(value))


def test_exported_config_schemas_follow_the_release(tmp_path):
    export("4.9.7", tmp_path / "497")
    export("5.1.4", tmp_path / "514")
    assert not (tmp_path / "497" / "config" / "consumerOrderInfo.schema.json").exists()
    assert (tmp_path / "514" / "config" / "consumerOrderInfo.schema.json").exists()
    sub497 = json.loads((tmp_path / "497" / "config" / "subscriptionGroup.schema.json").read_text())
    assert "forbiddenTable" not in sub497["properties"] and sub497["x-release"] == "4.9.7"
    # Each release's files have exactly the keys of its own schemas...
    for release in ("4.9.7", "5.1.4"):
        for name in ("topics", "subscriptionGroup", "consumerOffset"):
            data = store_path(f"rocketmq-{release}") / "config" / f"{name}.json"
            assert _config_errors(tmp_path / release.replace(".", ""), f"{name}.schema.json", data) == []
    # ...and 5.1.4's files have keys the 4.9.7 schemas do not know.
    errors = _config_errors(tmp_path / "497", "subscriptionGroup.schema.json",
                            store_path("rocketmq-5.1.4") / "config" / "subscriptionGroup.json")
    assert any("forbiddenTable" in e for e in errors) and any("consumeMessageOrderly" in e for e in errors)

"""Large consumer offsets files read into arrays, against the whole-document reader and the vectors."""

from __future__ import annotations

import os
import random
import shutil

import pytest

import rmqformats.config as config
from rmqformats import open_store
from rmqformats.cli import main
from rmqformats.config.compact import CompactConsumerOffsetsFile, read_offset_tables
from rmqformats.errors import ConfigError, ConfigSchemaError, ConfigSyntaxError
from rmqformats.lag import LagRow

from conftest import store_path


def _both(path, monkeypatch):
    """(whole-document result, array result) of read_config_file on one file."""
    whole = config.read_config_file(path)
    monkeypatch.setattr(config, "COMPACT_BYTES", 0)
    compact = config.read_config_file(path)
    monkeypatch.undo()
    assert type(whole.model) is config.ConsumerOffsetsFile
    assert type(compact.model) is CompactConsumerOffsetsFile
    return whole, compact


def _assert_same(whole, compact):
    a, b = whole.model, compact.model
    assert list(b.entries()) == a.entries() and len(b.entries()) == len(a.entries())
    assert [b.entries()[i] for i in range(len(a.entries()))] == a.entries()
    assert b.entries()[-1:] == a.entries()[-1:]
    assert dict(b.offsets) == a.offsets
    assert all(b.offsets[k] == v for k, v in a.offsets.items())
    assert {k: v for k, v in b.offset_table.items()} == a.offset_table
    assert dict(b.lmq_offset_table or {}) == dict(a.lmq_offset_table or {})
    assert (b.data_version, b.group_topic_map, dict(b.extra)) == (a.data_version, a.group_topic_map, dict(a.extra))
    assert compact.to_bytes() == whole.to_bytes()
    assert (compact.source, compact.path, compact.encoding, compact.unknown_keys, compact.warnings) == \
        (whole.source, whole.path, whole.encoding, whole.unknown_keys, whole.warnings)
    assert compact.raw == b""


def test_vector_files_equal_whole_document(version, monkeypatch):
    whole, compact = _both(store_path(version) / "config" / "consumerOffset.json", monkeypatch)
    assert whole.model.entries()
    _assert_same(whole, compact)


def _synthetic(n_keys: int, seed: int = 7, lmq: bool = False) -> str:
    """A fastjson-style consumerOffset.json: ``n_keys`` topic@group keys, 0 to 8 queues each."""
    rng = random.Random(seed)
    parts = []
    for k in range(n_keys):
        queues = ",".join(f"{q}:{rng.randrange(10 ** rng.randrange(1, 19))}" for q in range(rng.randrange(9)))
        parts.append(f'\n\t\t"Topic_{k % 97}@Group_{k // 97}":{{{queues}\n\t\t}}')
    text = ('{\n\t"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},'
            '\n\t"groupTopicMap":{"Group_0":["Topic_0"]},\n\t"offsetTable":{' + ",".join(parts) + "\n\t}")
    if lmq:
        text += ',\n\t"lmqOffsetTable":{"%LMQ%q1@G":5,"%LMQ%q2@G":-1,"Topic_1@Group_0":77}'
    return text + ',\n\t"newerBrokerField":[1,2]\n}'


def test_synthetic_file_equals_whole_document(tmp_path, monkeypatch):
    path = tmp_path / "consumerOffset.json"
    path.write_text(_synthetic(20_000, lmq=True), encoding="utf-8")
    assert path.stat().st_size > 800_000
    whole, compact = _both(path, monkeypatch)
    assert len(whole.model.entries()) > 60_000
    assert whole.unknown_keys == ("$.newerBrokerField",)
    _assert_same(whole, compact)
    # The size threshold picks the array reader by itself.
    monkeypatch.setattr(config, "COMPACT_BYTES", 1 << 20)
    assert type(config.read_config_file(path).model) is CompactConsumerOffsetsFile


def test_duplicate_and_odd_keys_as_whole_document(tmp_path, monkeypatch):
    path = tmp_path / "consumerOffset.json"
    path.write_text('{"offsetTable":{"A@g":{0:1,1:2},"B@g":{"3":4},"A@g":{0:5},12:{0:6},"C@h":{}}}',
                    encoding="utf-8")
    whole, compact = _both(path, monkeypatch)
    assert whole.model.offset_table == {"A@g": {0: 5}, "B@g": {3: 4}, "12": {0: 6}, "C@h": {}}
    _assert_same(whole, compact)


@pytest.mark.parametrize("text, error", [
    ('{"offsetTable":{"A@g":{0:1,1:x}}}', ConfigSyntaxError),
    ('{"offsetTable":{"A@g":{0:1,1:2}', ConfigSyntaxError),
    ('{"offsetTable":{"A@g":{0:1,1:9223372036854775808}}}', ConfigSchemaError),
    ('{"offsetTable":{"A@g":{0:"1"}}}', ConfigSchemaError),
    ('{"offsetTable":{"A@g":[1]}}', ConfigSchemaError),
    ('{"offsetTable":[]}', ConfigSchemaError),
    ('{"dataVersion":{"counter":"x"},"offsetTable":{}}', ConfigSchemaError),
    ('{"lmqOffsetTable":{}}', ConfigSchemaError),
    ('[1]', ConfigSchemaError),
    ('[1] x', ConfigSyntaxError),
])
def test_damage_gives_the_same_typed_error(tmp_path, monkeypatch, text, error):
    path = tmp_path / "consumerOffset.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as whole:
        config.read_config_file(path)
    monkeypatch.setattr(config, "COMPACT_BYTES", 0)
    with pytest.raises(ConfigError) as compact:
        config.read_config_file(path)
    assert type(compact.value) is type(whole.value)
    assert isinstance(compact.value, (error, ConfigSchemaError, ConfigSyntaxError))
    assert compact.value.path == str(path)
    if error is ConfigSyntaxError or "dataVersion" in text or text == "[1]" or "[]" in text:
        assert (compact.value.offset, compact.value.json_path) == (whole.value.offset, whole.value.json_path)


def test_bak_fallback_as_whole_document(tmp_path, monkeypatch):
    path = tmp_path / "consumerOffset.json"
    bak = tmp_path / "consumerOffset.json.bak"
    bak.write_text(_synthetic(2000, seed=3), encoding="utf-8")
    for damaged in ('{"offsetTable":{"A@g":{0:', ""):
        path.write_text(damaged, encoding="utf-8")
        whole, compact = _both(path, monkeypatch)
        assert compact.source == "bak" and compact.path == str(bak)
        _assert_same(whole, compact)
    path.unlink()
    whole, compact = _both(path, monkeypatch)
    _assert_same(whole, compact)
    path.write_text('{"offsetTable":{"A@g":{0:', encoding="utf-8")
    bak.write_text('{"offsetTable":[]}', encoding="utf-8")
    monkeypatch.setattr(config, "COMPACT_BYTES", 0)
    with pytest.raises(ConfigError, match="the .bak copy fails too"):
        config.read_config_file(path)
    with pytest.raises(ConfigError, match="the .bak copy fails too"):
        read_offset_tables(path)


def test_offset_tables_of_a_missing_file(tmp_path):
    assert read_offset_tables(tmp_path / "consumerOffset.json") is None


def _row_for(topic, group, qid, offset):
    return LagRow(group, topic, qid, offset, 0, 0, 0, 0, None, offset < 0, offset > 0, "SimpleCQ", False,
                  "no consumequeue folder: max offset taken as 0")


def test_lag_of_a_large_file_equals_its_parts(tmp_path, version):
    """The vector's rows and one row per synthetic offset (topics without queues), in order."""
    store = tmp_path / "store"
    shutil.copytree(store_path(version), store)
    original = (store / "config" / "consumerOffset.json").read_text(encoding="utf-8")
    head, _, tail = original.partition('"offsetTable":{')
    assert tail
    rng = random.Random(5)
    extra = {}
    parts = []
    for k in range(8_000):
        topic, group = f"Synth_{k % 61}", f"GroupSynth_{k // 61}"
        queues = {q: rng.randrange(10 ** 12) for q in range(rng.randrange(1, 6))}
        for q, o in queues.items():
            extra[(topic, group, q)] = o
        parts.append(f'"{topic}@{group}":{{' + ",".join(f"{q}:{o}" for q, o in queues.items()) + "}")
    (store / "config" / "consumerOffset.json").write_text(
        head + '"offsetTable":{' + ",".join(parts) + "," + tail, encoding="utf-8")
    before = list(open_store(store_path(version)).consumer_lag())
    rows = open_store(store).consumer_lag()
    expected = sorted(before + [_row_for(t, g, q, o) for (t, g, q), o in extra.items()],
                      key=lambda r: (r.group, r.topic, r.queue_id))
    assert list(rows) == expected
    assert list(rows) == expected  # made again on each iteration
    assert list(open_store(store).consumer_lag(group="GroupSynth_3")) == \
        [r for r in expected if r.group == "GroupSynth_3"]


def test_lag_merges_lmq_offsets(tmp_path):
    store = tmp_path / "store"
    (store / "config").mkdir(parents=True)
    (store / "commitlog").mkdir()
    (store / "config" / "consumerOffset.json").write_text(
        '{"offsetTable":{"B@g":{1:3,0:2},"A@g":{0:1},"A@g":{0:4},"%LMQ%x@h":{0:9}}}', encoding="utf-8")
    (store / "config" / "lmqConsumerOffset.json").write_text(
        '{"offsetTable":{},"lmqOffsetTable":{"%LMQ%x@h":11,"%LMQ%y@a":0}}', encoding="utf-8")
    rows = list(open_store(store).consumer_lag())
    assert [(r.group, r.topic, r.queue_id, r.committed_offset) for r in rows] == [
        ("a", "%LMQ%y", 0, 0), ("g", "A", 0, 4), ("g", "B", 0, 2), ("g", "B", 1, 3), ("h", "%LMQ%x", 0, 11)]


def test_lag_table_streamed_equals_held(capsys, monkeypatch, version):
    import rmqformats.cli.config as cli_config
    args = ["lag", str(store_path(version))]
    held = main(args), capsys.readouterr()
    monkeypatch.setattr(cli_config, "LAG_ROWS_HELD", 0)
    streamed = main(args), capsys.readouterr()
    assert streamed == held
    assert "total lag" in held[1].out


def test_mutations_agree_with_whole_document(tmp_path, monkeypatch):
    """Seeded byte mutations of a small file: the array reader fails when the whole-document one does
    (with a typed error), and otherwise gives the same model (but for queue ids past Java's int)."""
    base = _synthetic(40, seed=11, lmq=True).encode()
    rng = random.Random(20261123)
    path = tmp_path / "consumerOffset.json"
    for n in range(150):
        data = bytearray(base)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[at] = rng.choice(b'{}[]:,"0123456789-@ x\\')
            elif op == 1:
                del data[at:at + rng.randrange(1, 6)]
            else:
                data[at:at] = bytes(rng.choice(b'{}:,"09-') for _ in range(rng.randrange(1, 4)))
        path.write_bytes(bytes(data))
        try:
            whole = config.read_config_file(path)
        except ConfigError as exc:
            whole = exc
        monkeypatch.setattr(config, "COMPACT_BYTES", 0)
        try:
            compact = config.read_config_file(path)
        except ConfigError as exc:
            compact = exc
        monkeypatch.undo()
        if isinstance(whole, ConfigError):
            assert isinstance(compact, ConfigError), (n, bytes(data))
            assert compact.path == whole.path
        elif isinstance(compact, ConfigError):
            assert "int32" in compact.reason, (n, bytes(data), compact)
        elif whole.model is None:
            assert compact.model is None
        else:
            _assert_same(whole, compact)


def _shuffled_offsets_text(rng, keys: int) -> str:
    """An offsets file in a hash map's order, with keys written twice, ``T``/``T@`` pairs, an ``offsetTable``
    written twice (its first copy dropped) and an ``lmqOffsetTable``."""
    entries = []
    for k in range(keys):
        topic, group = f"T{k % 37}", f"G{(k // 37) % 53}"
        key = topic if k % 97 == 0 else (f"{topic}@" if k % 89 == 0 else f"{topic}@{group}")
        entries.append(f'"{key}":{{' + ",".join(f"{q}:{rng.randrange(10 ** 9)}"
                                                 for q in rng.sample(range(8), rng.randrange(1, 4))) + "}")
    rng.shuffle(entries)
    dropped = '"offsetTable":{"Gone@G":{0:1},"T1@G1":{7:7}}'
    lmq = ",".join(f'"%LMQ%T{k % 37}@G{k % 53}":{k}' for k in range(0, keys, 7))
    return "{" + dropped + ',"offsetTable":{' + ",".join(entries) + '},"lmqOffsetTable":{' + lmq + "}}"


def _expected_lag(text: str) -> list[tuple]:
    """(group, topic, queue id, committed) as Python's json reads the file: a key written twice keeps its
    first place and last value; the keys of one (topic, group) merged table by table in their order."""
    import json
    import re
    doc = json.loads(re.sub(r"([{,])(-?\d+):", r'\1"\2":', text))
    committed: dict[tuple[str, str], dict[int, int]] = {}
    for key, qs in doc["offsetTable"].items():
        t, _, g = key.partition("@")
        committed.setdefault((g, t), {}).update({int(q): o for q, o in qs.items()})
    for key, o in doc["lmqOffsetTable"].items():
        t, _, g = key.partition("@")
        committed.setdefault((g, t), {})[0] = o
    return [(g, t, q, o) for (g, t), qs in sorted(committed.items()) for q, o in sorted(qs.items())]


def test_lag_sorted_through_run_files_equals_the_document(tmp_path, monkeypatch):
    """Rows sorted in memory and through many small run files (merged in passes) are the document's, in
    order; the run files go when the rows do; a damaged file's entries give way to its .bak's."""
    import gc
    import tempfile

    import rmqformats.config.offsetorder as offsetorder
    store = tmp_path / "store"
    (store / "config").mkdir(parents=True)
    (store / "commitlog").mkdir()
    text = _shuffled_offsets_text(random.Random(29), 3_000)
    path = store / "config" / "consumerOffset.json"
    path.write_text(text, encoding="utf-8")
    expected = _expected_lag(text)
    assert len(expected) > 4_000 and any(t == "T0" and g == "" for g, t, _, _ in expected)

    def made(**kw):
        return [(r.group, r.topic, r.queue_id, r.committed_offset)
                for r in open_store(store).consumer_lag(with_store_time=False, **kw)]

    assert made() == expected
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(offsetorder, "RUN_BYTES", 20_000)
    monkeypatch.setattr(offsetorder, "MAX_FANIN", 3)
    rows = open_store(store).consumer_lag(with_store_time=False)
    (folder,) = temp.iterdir()
    assert folder.name.startswith("rmqformats-offsets-") and 1 <= len(list(folder.iterdir())) <= 3
    for _ in range(2):  # made again from the run files on each iteration
        assert [(r.group, r.topic, r.queue_id, r.committed_offset) for r in rows] == expected
    offsetorder._remove(str(folder), os.getpid() + 1)  # a forked child's exit: the files stay
    assert folder.exists()
    del rows
    gc.collect()
    assert list(temp.iterdir()) == []
    assert made(group="G5") == [e for e in expected if e[0] == "G5"]
    assert made(topic="T0", group="") == [e for e in expected if e[:2] == ("", "T0")]
    # A damaged file read past many runs, then its .bak: only the .bak's entries.
    bak = _shuffled_offsets_text(random.Random(30), 2_000)
    path.with_name("consumerOffset.json.bak").write_text(bak, encoding="utf-8")
    path.write_text(text[:-200], encoding="utf-8")
    assert made() == _expected_lag(bak)
    gc.collect()
    assert list(temp.iterdir()) == []

"""``consumerOffset.json`` tables read from the bytes in chunks give what the text walk gives.

:func:`rmqformats.config.compact.read_offset_tables` walks the file's bytes
a chunk at a time (never holding its text) when they are as brokers write
them, and hands anything else to the text walk. Here both read the same
documents, with chunks of a few bytes so that every entry, key, number and
white-space run is cut somewhere; the keys, queue ids and offsets (and for
damaged or unusual files, the error) must be the same. One check of memory:
a file of about 40 MB read in a child process grows it by less than one and a half times its size
(the text walk held twice its size).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rmqformats.config import compact
from rmqformats.errors import ConfigError

EXAMPLES = int(os.environ.get("RMQFORMATS_FUZZ_EXAMPLES", "30"))


def _tables(found) -> tuple:
    if found is None:
        return None
    t, lmq = found.offset_table, found.lmq_offset_table
    return ([(k, t[k]) for k in t] if t is not None else None,
            [(k, lmq[k]) for k in lmq] if lmq is not None else None,
            [k for k in found.order if k in compact.OFFSET_TABLES])


def _by_text(path) -> tuple:
    """The text walk's result (the byte stream turned off), or its error."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ("error",)
    try:
        return _tables(compact.walk_text(text, str(path), "utf-8", keep_others=False))
    except ConfigError as exc:
        return ("error", exc.reason)


def _by_stream(path, chunk: int) -> tuple:
    old = compact.CHUNK_BYTES, compact._MAX_PIECE
    compact.CHUNK_BYTES, compact._MAX_PIECE = chunk, max(chunk, 4096)
    try:
        with open(path, "rb") as f:
            return _tables(compact._stream_tables(f, os.path.getsize(path)))
    except compact._NotPlain:
        return ("not plain",)
    finally:
        compact.CHUNK_BYTES, compact._MAX_PIECE = old


_WS = st.sampled_from(["", " ", "\n\t\t", "\r\n", "\f", "\b"])
_NAME = st.sampled_from(["Topic_A", "TopicB", "%RETRY%g1", "", "主题", "T\\u0041", "a\\\"b", "x@y", "0"])
_NUM = st.one_of(st.integers(0, 10 ** 9), st.integers(-(1 << 63), (1 << 63) - 1), st.sampled_from([-1, 0]))


@st.composite
def documents(draw) -> str:
    ws = lambda: draw(_WS)  # noqa: E731
    entries = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(_NAME) + draw(st.sampled_from(["@", ""])) + draw(_NAME)
        queues = draw(st.lists(st.tuples(st.integers(-3, 40), _NUM), max_size=4))
        qmap = ",".join(f"{ws()}{q}{ws()}:{ws()}{o}{ws()}" for q, o in queues)
        entries.append(f'{ws()}"{key}"{ws()}:{ws()}{{{qmap}}}{ws()}')
    members = [f'{ws()}"offsetTable"{ws()}:{ws()}{{{",".join(entries)}}}{ws()}']
    if draw(st.booleans()):
        lmq = ",".join(f'{ws()}"{draw(_NAME)}@{draw(_NAME)}"{ws()}:{ws()}{draw(_NUM)}{ws()}'
                       for _ in range(draw(st.integers(0, 3))))
        members.append(f'{ws()}"lmqOffsetTable"{ws()}:{ws()}{{{lmq}}}')
    if draw(st.booleans()):
        members.insert(draw(st.integers(0, len(members))),
                       f'"dataVersion":{json.dumps({"counter": draw(_NUM), "timestamp": 1, "x": ["a", {"b": None}]})}')
    if draw(st.booleans()):
        members.append(members[0])  # a table written twice: the last one counts
    return draw(st.sampled_from(["", "\ufeff"])) + ws() + "{" + ",".join(members) + "}" + ws()


@settings(max_examples=EXAMPLES * 4, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=documents(), chunk=st.sampled_from([1, 3, 7, 64, 1 << 20]),
       cut=st.one_of(st.none(), st.integers(0, 10 ** 6)), flip=st.one_of(st.none(), st.tuples(st.integers(0, 10 ** 6),
                                                                                           st.integers(1, 255))))
def test_stream_reads_what_the_text_walk_reads(tmp_path, doc, chunk, cut, flip):
    raw = doc.encode("utf-8")
    if cut is not None:
        raw = raw[:cut % (len(raw) + 1)]
    if flip is not None and raw:
        at = flip[0] % len(raw)
        raw = raw[:at] + bytes([raw[at] ^ flip[1]]) + raw[at + 1:]
    path = tmp_path / "consumerOffset.json"
    path.write_bytes(raw)
    streamed = _by_stream(path, chunk)
    if streamed != ("not plain",):
        assert streamed == _by_text(path)
    # Through the public reader: the stream's result where it reads the file, else the text walk's.
    if not raw:
        return
    try:
        public = _tables(compact.read_offset_tables(path))
    except ConfigError as exc:
        public = ("error", exc.reason)
    expected = _by_text(path)
    if expected == ("error",):  # not UTF-8: the other character sets
        return
    assert public == expected


def test_broker_file_streams(tmp_path):
    """The file as a broker writes it is read by the stream, not handed to the text walk."""
    doc = {"offsetTable": {f"Topic_{i}@Group_{i % 3}": {q: q * 10 + i for q in range(4)} for i in range(50)},
           "dataVersion": {"counter": 3, "timestamp": 1700000000000}}
    text = json.dumps(doc, indent="\t").replace('"0"', "0").replace('"1"', "1").replace('"2"', "2").replace('"3"', "3")
    path = tmp_path / "consumerOffset.json"
    path.write_text(text)
    streamed = _by_stream(path, 5)
    assert streamed != ("not plain",)
    assert streamed == _by_text(path)
    t = compact.read_offset_tables(path).offset_table
    assert t["Topic_7@Group_1"] == {0: 7, 1: 17, 2: 27, 3: 37}
    assert "Topic_7@Group_2" not in t and len(t) == 50 and t.count() == 200


GROUP = "ConsumerGroup_of_the_order_settlement_service_in_the_east_region_datacenter"


@pytest.fixture(scope="module")
def big_offsets_file(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("offsets") / "consumerOffset.json"
    with open(path, "w") as f:
        f.write('{"offsetTable":{')
        for k in range(300_000):  # about 40 MB: one queue per key, as a broker with many groups writes
            f.write(("," if k else "") + f'\n\t\t"Topic_{k % 5000:05d}@{GROUP}_{k // 5000:05d}":{{0:{k * 7}}}')
        f.write("}}")
    return str(path)


def test_big_file_peak_memory_is_a_fraction_of_its_size(big_offsets_file):
    code = textwrap.dedent(f"""
        import rmqformats.config.compact as c
        def rss(field):
            with open('/proc/self/status') as f:
                return next(int(l.split()[1]) for l in f if l.startswith(field)) * 1024
        before = rss('VmRSS:')
        t = c.read_offset_tables({big_offsets_file!r}).offset_table
        assert len(t) == 300_000 and t['Topic_00007@{GROUP}_00001'] == {{0: 5007 * 7}}
        print(rss('VmHWM:') - before)
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    grown, size = int(run.stdout.split()[-1]), os.path.getsize(big_offsets_file)
    # The text walk holds the bytes and the text at once (twice the size, then a string per key); the
    # stream holds the arrays (36 bytes per key here, a third of the file), each name once and a few chunks.
    assert grown < size * 1.5, f"peak grew {grown >> 20} MiB reading a {size >> 20} MiB file"

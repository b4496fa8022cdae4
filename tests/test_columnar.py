"""The columnar walk gives RocketMQ's own reading of the vector stores (truth/messages.jsonl), column for
column, and its object view (scan(), Message) gives the same rows; both stop where the broker's recovery does."""

from __future__ import annotations

import base64
import os
import random
import shutil
import struct

import pyarrow as pa
import pytest

import rmqformats
from rmqformats import EndReason, synth
from rmqformats.columnar import COLUMNS, ColumnarScan, find_record_start
from rmqformats.message import millis_to_datetime_or_none

from conftest import store_path, truth_records


def object_rows(scan) -> list[dict]:
    """The object API's messages as dicts keyed like the columnar columns."""
    rows = []
    for m in scan:
        rows.append({
            "commitLogOffset": m.commitlog_offset, "storeSize": m.store_size, "bodyCRC": m.body_crc,
            "queueId": m.queue_id, "flag": m.flag, "queueOffset": m.queue_offset, "sysFlag": m.sys_flag,
            "bornTimestamp": millis_to_datetime_or_none(m.born_timestamp), "bornHost": m.born_host,
            "storeTimestamp": millis_to_datetime_or_none(m.store_timestamp), "storeHost": m.store_host,
            "reconsumeTimes": m.reconsume_times, "preparedTransactionOffset": m.prepared_transaction_offset,
            "topic": m.topic, "properties": m.properties, "propertiesString": m.properties_raw,
            "msgId": m.msg_id, "body": m.shown_body, "bodyError": m.body_error, "tags": m.tags, "keys": m.keys,
            "uniqKey": m.uniq_key, "priority": m.priority, "liteTopic": m.lite_topic,
            "segment": os.path.basename(m.segment),
        })
    return rows


def columnar_rows(table: pa.Table) -> list[dict]:
    rows = table.to_pylist()
    for r in rows:
        if "properties" in r:
            r["properties"] = dict(r["properties"])
    return rows


def _truth_fields(r: dict) -> tuple:
    """The fields of a row that RocketMQ's decoder gives in truth/messages.jsonl."""
    host = r["bornHost"]
    return (r["commitLogOffset"], r["storeSize"], r["bodyCRC"], r["queueId"], r["flag"], r["queueOffset"],
            r["sysFlag"], int(r["bornTimestamp"].timestamp() * 1000), int(r["storeTimestamp"].timestamp() * 1000),
            r["reconsumeTimes"], r["preparedTransactionOffset"], r["topic"], r["properties"],
            r["propertiesString"], r["msgId"], r["uniqKey"], r["tags"], r["body"], r["segment"], host, r["keys"])


def _truth_expected(t: dict) -> tuple:
    body = base64.b64decode(t.get("bodyDecompressedBase64", t["bodyRawBase64"]))
    host = t["bornHost"] if ":" not in t["bornHost"] else f"[{t['bornHost']}]"
    return (t["commitlogOffset"], t["storeSize"], t["bodyCRC"], t["queueId"], t["flag"], t["queueOffset"],
            t["sysFlag"], t["bornTimestamp"], t["storeTimestamp"], t["reconsumeTimes"],
            t["preparedTransactionOffset"], t["topic"], t["properties"], t["propertiesString"], t["msgId"],
            t["uniqKey"], t["tags"], body, t["file"], f"{host}:{t['bornPort']}",
            [k for k in (t["keys"] or "").split(" ") if k])


def assert_truth(rows: list[dict], truth: list[dict], damaged: tuple[str, int, int] | None = None) -> None:
    """``rows`` are the first messages of the truth, in order, each with RocketMQ's values; a record that
    overlaps ``damaged`` (segment name, first and last + 1 changed byte) is held to its offset only."""
    messages = [t for t in truth if t["kind"] == "MESSAGE"]
    assert [r["commitLogOffset"] for r in rows] == [t["commitlogOffset"] for t in messages[:len(rows)]]
    for r, t in zip(rows, messages):
        if damaged is not None and t["file"] == damaged[0] and \
                t["fileOffset"] < damaged[2] and damaged[1] < t["fileOffset"] + t["totalSize"]:
            continue
        assert _truth_fields(r) == _truth_expected(t), t["commitlogOffset"]


def assert_same(path, *, columns=None, threads=1, batch_size=37, range_size=None, truth=None, damaged=None,
                **options):
    """The walk's batches and its object view on ``path``: the same rows (every column), the same end, the
    same BLANK records; with ``truth`` (a vector store's truth/messages.jsonl) both hold RocketMQ's values."""
    log = rmqformats.open_store(path).commitlog
    scan = log.scan(**options)
    expected = object_rows(scan)
    if range_size is not None:
        options["range_size"] = range_size
    col = log.batches(columns, batch_size=batch_size, threads=threads, **options)
    table = col.read_all()
    got = columnar_rows(table)
    names = list(COLUMNS if columns is None else columns)
    assert table.column_names == names
    if truth is not None:
        assert_truth(expected, truth, damaged)
        if columns is None:
            assert_truth(got, truth, damaged)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == {k: e[k] for k in names}, e["commitLogOffset"]
    assert col.end == scan.end
    assert col.blanks == scan.blanks
    return table, col.end


@pytest.mark.parametrize("threads, range_size", [(1, None), (2, None), (2, 4096), (3, 10_000)])
def test_every_column_and_the_object_view_equal_the_ground_truth(version, threads, range_size):
    """Threads decode byte ranges of a segment at once: the result is the serial walk's, RocketMQ's reading."""
    table, end = assert_same(store_path(version), threads=threads, range_size=range_size,
                             truth=truth_records(version))
    assert table.num_rows == len(_messages(version))
    assert end.reason is EndReason.ZERO_TAIL


def test_every_column_equals_the_ground_truth(version):
    """RocketMQ's own decoder (truth/messages.jsonl) against the columns of to_arrow(), field by field."""
    rows = columnar_rows(rmqformats.open_store(store_path(version)).commitlog.to_arrow())
    assert len(rows) == len(_messages(version))
    assert_truth(rows, truth_records(version))


def test_named_values_without_the_properties_map(version):
    """``tags``, ``keys``, ``uniqKey``, ``priority`` and ``liteTopic`` asked without ``properties`` (the split then
    copies no name or value) are the columns of the full walk, which hold RocketMQ's reading."""
    log = rmqformats.open_store(store_path(version)).commitlog
    named = ["commitLogOffset", "tags", "keys", "uniqKey", "priority", "liteTopic"]
    assert log.to_arrow(named).equals(log.to_arrow().select(named))


def test_the_properties_split_finds_the_same_names_without_copying_the_pairs():
    """The split kernel with and without the pairs: the same named values (a repeated name takes its last
    value, the first eight bytes of longer names compared whole), and no pair copied without them."""
    import numpy as np

    from rmqformats.walk import kernels as K

    texts = [b"TAGS\x01a\x02KEYS\x01k1 k2", b"A\x011\x02A\x012\x02TAGS\x01b\x02TAGS\x01c",
             b"LONGNAME1\x01x\x02LONGNAME2\x01y\x02LONGNAME1\x01z\x02UNIQ_KEY\x01u", b"", b"\x01x\x02TAGS\x01"]
    buf = np.frombuffer(b"".join(texts), np.uint8).copy()
    length = np.array([len(t) for t in texts], np.int64)
    pos = np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64)
    names = [b"TAGS", b"KEYS", b"UNIQ_KEY", b"LONGNAME1"]
    name_bytes = np.frombuffer(b"".join(names), np.uint8).copy()
    name_offsets = np.cumsum([0] + [len(n) for n in names]).astype(np.int64)
    full = K.split_properties(buf, pos, length, name_bytes, name_offsets, True)
    lean = K.split_properties(buf, pos, length, name_bytes, name_offsets, False)
    assert np.array_equal(full[6], lean[6]) and np.array_equal(full[7], lean[7])
    values = [[None if p < 0 else bytes(buf[p:p + n]) for p, n in zip(row_p, row_n)]
              for row_p, row_n in zip(full[6], full[7])]
    assert values == [[b"a", b"c", None, None, None], [b"k1 k2", None, None, None, None],
                      [None, None, b"u", None, None], [None, None, b"z", None, None]]
    keys = bytes(full[2]).decode()
    assert full[0].tolist() == [0, 2, 4, 7, 7, 7] and keys == "TAGSKEYSATAGSLONGNAME1LONGNAME2UNIQ_KEY"
    assert bytes(full[4]).decode() == "ak1 k22czyu"
    assert len(lean[2]) == len(lean[4]) == 0 and lean[1].tolist() == [0] and lean[3].tolist() == [0]


def test_read_and_decode_message_equal_the_ground_truth(version):
    """One record at an offset (read(), decode_message) goes through the walk's kernels: RocketMQ's values."""
    log = rmqformats.open_store(store_path(version)).commitlog
    for t in _messages(version)[::7]:
        m = log.read(t["commitlogOffset"])
        assert (m.commitlog_offset, m.file_offset, m.store_size, m.topic, m.properties_raw, m.body_crc) == (
            t["commitlogOffset"], t["fileOffset"], t["storeSize"], t["topic"], t["propertiesString"], t["bodyCRC"])
        data = (store_path(version) / "commitlog" / t["file"]).read_bytes()
        d = rmqformats.decode_message(data, t["fileOffset"], t["file"], t["commitlogOffset"] - t["fileOffset"])
        assert d == m._replace(segment=t["file"])


def test_schema_types():
    table = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog.to_arrow()
    assert table.schema.field("storeTimestamp").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("properties").type == pa.map_(pa.string(), pa.string())
    assert table.schema.field("keys").type == pa.list_(pa.string())
    assert table.schema.field("body").type == pa.binary()


def test_raw_bodies_on_request(version):
    log = rmqformats.open_store(store_path(version)).commitlog
    raw = log.to_arrow(["commitLogOffset", "body"], decompress=False).column("body").to_pylist()
    assert raw == [m.body_raw for m in log.scan()]


def test_column_selection_and_pandas():
    log = rmqformats.open_store(store_path("rocketmq-5.3.3")).commitlog
    df = log.to_pandas(["topic", "queueId", "commitLogOffset"])
    assert list(df.columns) == ["topic", "queueId", "commitLogOffset"]  # the order asked
    assert log.batches(["topic", "queueId", "commitLogOffset"]).schema.names == ["commitLogOffset", "queueId", "topic"]
    assert len(df) == sum(1 for _ in log.scan())
    with pytest.raises(ValueError, match="unknown column"):
        log.batches(["nope"])


@pytest.mark.parametrize("options", [
    {"topic": "TopicTest"}, {"queue_id": 1}, {"topic": "TopicTest", "queue_id": 2}, {"tag": "TagA"},
    {"key": "order-0"}, {"from_offset": 300_000}, {"to_offset": 600_000}, {"from_offset": 5000, "to_offset": 900_000},
    {"topic": "NoSuchTopic"},
])
def test_filters_select_what_the_messages_command_selects(version, options):
    log = rmqformats.open_store(store_path(version)).commitlog
    msgs = list(log.scan())
    times = sorted({m.store_timestamp for m in msgs})
    cases = [dict(options)]
    if "topic" in options:  # and a time window
        cases.append({**options, "since": times[len(times) // 3], "until": times[2 * len(times) // 3]})
    for opts in cases:
        expected = [m.commitlog_offset for m in msgs
                    if (opts.get("topic") is None or m.topic == opts["topic"])
                    and (opts.get("queue_id") is None or m.queue_id == opts["queue_id"])
                    and (opts.get("tag") is None or m.tags == opts["tag"])
                    and (opts.get("key") is None or opts["key"] in m.keys or m.uniq_key == opts["key"])
                    and (opts.get("since") is None or m.store_timestamp >= opts["since"])
                    and (opts.get("until") is None or m.store_timestamp < opts["until"])
                    and (opts.get("from_offset") is None or m.commitlog_offset >= opts["from_offset"])
                    and (opts.get("to_offset") is None or m.commitlog_offset < opts["to_offset"])]
        got = log.to_arrow(["commitLogOffset"], batch_size=16, **opts).column(0).to_pylist()
        assert got == expected, opts


def test_since_until_take_datetimes():
    log = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog
    t = log.to_arrow(["storeTimestamp"]).column(0).to_pylist()
    mid = t[len(t) // 2]
    assert log.to_arrow(["storeTimestamp"], since=mid).num_rows == sum(1 for x in t if x >= mid)


# -- a generated commit log with every record variant ------------------------------------------------

def _variants() -> list[synth.MessageSpec]:
    body = b"payload \xe4\xb8\xad " * 40
    specs = []
    hosts = [(("192.0.2.10", 54321), ("127.0.0.1", 10911)), (("2001:db8::10", 54322), ("127.0.0.1", 10911)),
             (("192.0.2.11", 1), ("2001:db8:0:1::53", 10912)), (("::1", 65535), ("fe80::1:2:3:4", 0))]
    for i, (born, store) in enumerate(hosts):
        for compression in (None, "zlib", "zlib-legacy", "lz4", "zstd"):
            specs.append(synth.MessageSpec(
                topic="TopicVariants", body=body * (i + 1), queue_id=i, queue_offset=len(specs),
                properties={"TAGS": f"T{i}", "KEYS": f"k{i}  k{i}b ", "UNIQ_KEY": f"U{len(specs):08d}",
                            "中文": "值\x01with-separator"},
                born_host=born, store_host=store, compression=compression))
    long_topic = "%RETRY%" + "G" * 170  # a V2 record (2-byte topic length)
    specs.append(synth.MessageSpec(topic=long_topic, body=b"v2", properties={"TAGS": "v2"}))
    specs.append(synth.MessageSpec(topic="TopicEmpty", body=b"", properties={}))
    specs.append(synth.MessageSpec(topic="TopicTrailing", body=b"x", properties={"TAGS": "a", "KEYS": "b"},
                                   trailing_separator=True))
    # Pairs the broker drops (empty name or value) and a repeated name (last value wins).
    specs.append(synth.MessageSpec(topic="TopicOddProps", body=b"x",
                                   properties="\x01v\x02n\x01\x02TAGS\x01first\x02KEYS\x01a b\x02TAGS\x01second"))
    specs.append(synth.MessageSpec(topic="TopicBadUtf8", body=b"x", properties="TAGS\x01ok"))
    specs.append(synth.MessageSpec(topic="TopicCrc", body=b"crc body", properties={"TAGS": "c"},
                                   crc32_property=True))
    specs.append(synth.MessageSpec(topic="TopicNeg", body=b"x", born_timestamp=-1, store_timestamp=2**41,
                                   reconsume_times=-3, flag=-7, queue_offset=-1))
    # 5.4 priority and 5.5 lite-topic messages, and priorities Java's Integer.parseInt reads or refuses.
    for value in ("3", "40", "-2", "+07", "\uff19", "x1", "2147483648", ""):
        specs.append(synth.priority_message("TopicPriority", value, body=b"p"))
    specs.append(synth.lite_message("TopicParent", "lite-\u4e2d", body=b"l"))
    return specs


@pytest.fixture(scope="module")
def variants_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("variants")
    synth.write_commitlog(root / "commitlog", _variants(), segment_size=4096)
    # Invalid UTF-8 in one topic and one properties string, as damaged or foreign writers leave them.
    log = rmqformats.open_store(root).commitlog
    for m in log.scan():
        if m.topic == "TopicBadUtf8":
            with open(m.segment, "r+b") as f:
                data = f.read()
                at = data.index(b"TopicBadUtf8", m.file_offset)
                f.seek(at + 5)
                f.write(b"\xff")
                at = data.index(b"TAGS\x01ok", m.file_offset)
                f.seek(at + 5)
                f.write(b"\xc3")
    return root


@pytest.mark.parametrize("threads", [1, 2])
def test_every_record_variant(variants_store, threads):
    table, end = assert_same(variants_store, threads=threads, batch_size=5, range_size=4096)
    assert end.reason is EndReason.ZERO_TAIL
    assert len(rmqformats.open_store(variants_store).commitlog.segments) >= 3  # BLANK records between them
    rows = {r["topic"]: r for r in columnar_rows(table)}
    assert rows["TopicOddProps"]["properties"] == {"TAGS": "second", "KEYS": "a b"}
    assert rows["TopicOddProps"]["keys"] == ["a", "b"]
    assert "\ufffd" in next(t for t in rows if t.startswith("Topic\ufffd"))
    hosts = {r["storeHost"] for r in columnar_rows(table)}
    assert "[fe80:0:0:0:1:2:3:4]:0" in hosts
    assert any(r["storeSize"] and r["topic"].startswith("%RETRY%") for r in columnar_rows(table))


def test_small_windows_and_records_larger_than_the_window(tmp_path):
    specs = [synth.MessageSpec(topic="Big", body=bytes([i % 251]) * (200_000 + i), queue_offset=i) for i in range(5)]
    specs += [synth.MessageSpec(topic="Small", body=b"s" * i, queue_offset=i) for i in range(300)]
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 22)
    for threads, range_size in ((1, None), (2, None), (2, 4096), (3, 100_000)):
        log = rmqformats.open_store(tmp_path).commitlog
        extra = {} if range_size is None else {"range_size": range_size}
        col = log.batches(window_size=1 << 16, batch_size=7, threads=threads, **extra)
        got = columnar_rows(col.read_all())
        assert [r["body"] for r in got] == [m.body for m in log.scan()]
        scan = log.scan()
        list(scan)
        assert col.end == scan.end and col.end.reason is EndReason.ZERO_TAIL


# -- damage: the same end of data, reason and error as the object API --------------------------------

def _messages(version):
    return [t for t in truth_records(version) if t["kind"] == "MESSAGE"]


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _assert_damage(root, version, damaged=None):
    """Default, strict and CRC-checking scans agree and read the undamaged records as RocketMQ does; strict
    raises the same error."""
    truth = truth_records(version)
    assert_same(root, truth=truth, damaged=damaged)
    assert_same(root, verify_crc=True, truth=truth, damaged=damaged)
    assert_same(root, threads=2, range_size=4096, truth=truth, damaged=damaged)  # ranges after the damage are dropped
    assert_same(root, threads=2, range_size=5000, verify_crc=True, truth=truth, damaged=damaged)
    errors = []
    for decoder in ("object", "columnar"):
        log = rmqformats.open_store(root).commitlog
        try:
            if decoder == "object":
                list(log.scan(strict=True))
            else:
                log.to_arrow(strict=True)
            errors.append(None)
        except rmqformats.RmqFormatError as exc:
            errors.append((type(exc), str(exc)))
    assert errors[0] == errors[1]


def test_damaged_copies(tmp_path, version):
    msgs = _messages(version)
    rng = random.Random(20261122)
    picks = rng.sample(msgs, 6)
    cases = []
    for t in picks:
        seg, pos, size = t["file"], t["fileOffset"], t["totalSize"]
        cases += [
            ("magic", seg, pos + 4, b"\x12\x34\x56\x78"),
            ("size-small", seg, pos, struct.pack(">i", 20)),
            ("size-large", seg, pos, struct.pack(">i", size + 1)),
            ("size-negative", seg, pos, struct.pack(">i", -5)),
            ("size-huge", seg, pos, struct.pack(">i", 0x7FFFFFF0)),
            ("body-length", seg, pos + 84, struct.pack(">i", 0x7FFF0000)),
            ("zero-hole", seg, pos, bytes(min(size, 64))),
            ("body-byte", seg, pos + size - 30, b"\x00\xff"),
            ("topic-length", seg, pos + size - 40, b"\x7f"),
        ]
    for name, seg, at, data in cases:
        root = tmp_path / f"{name}-{seg}-{at}"
        shutil.copytree(store_path(version), root)
        _patch(root / "commitlog" / seg, at, data)
        _assert_damage(root, version, (seg, at, at + len(data)))
        shutil.rmtree(root)  # 54 copies of a store at once would take GBs


def test_truncated_and_missing_blank(tmp_path, version):
    msgs = _messages(version)
    last = msgs[-1]
    blank = next(t for t in truth_records(version) if t["kind"] == "BLANK")
    cuts = [(last["file"], last["fileOffset"] + k) for k in (0, 3, 8, 50, last["totalSize"] - 1)]
    cuts += [(blank["file"], blank["fileOffset"]), (blank["file"], blank["fileOffset"] + 5)]
    for seg, cut in cuts:
        root = tmp_path / f"cut-{seg}-{cut}"
        shutil.copytree(store_path(version), root)
        os.truncate(root / "commitlog" / seg, cut)
        _assert_damage(root, version)
        shutil.rmtree(root)


def test_crc_mismatch_ends_the_data_like_the_object_api(tmp_path, version):
    t = _messages(version)[len(_messages(version)) // 2]
    root = tmp_path / "crc"
    shutil.copytree(store_path(version), root)
    with open(root / "commitlog" / t["file"], "r+b") as f:
        f.seek(t["fileOffset"] + 8)
        crc = struct.unpack(">i", f.read(4))[0]
        f.seek(t["fileOffset"] + 8)
        f.write(struct.pack(">i", crc ^ 1))
    damaged = (t["file"], t["fileOffset"] + 8, t["fileOffset"] + 12)
    _, end = assert_same(root, verify_crc=True, truth=truth_records(version), damaged=damaged)
    assert end.reason is EndReason.CRC_MISMATCH and end.offset == t["commitlogOffset"]
    _, end = assert_same(root, truth=truth_records(version), damaged=damaged)
    assert end.reason is EndReason.ZERO_TAIL


def test_a_file_that_shrinks_while_read_gives_a_typed_error(tmp_path):
    specs = [synth.MessageSpec(topic="T", body=b"b" * 1000, queue_offset=i) for i in range(900)]
    synth.write_commitlog(tmp_path / "s" / "commitlog", specs, segment_size=1 << 20)
    log = rmqformats.open_store(tmp_path / "s").commitlog
    seg = log.segments[0].path
    scan = log.batches(window_size=1 << 16, batch_size=4)
    next(iter(scan))
    os.truncate(seg, 300_000)
    with pytest.raises(rmqformats.RmqFormatError, match="shrank while it was read") as err:
        list(scan)
    assert isinstance(err.value, rmqformats.FileChangedError)
    assert err.value.path == seg


# -- byte ranges (splits inside segments) ------------------------------------------------------------

@pytest.mark.parametrize("split", [1, 13, 1000, 65536, 1 << 20])
def test_byte_ranges_cover_every_message_once(version, split):
    log = rmqformats.open_store(store_path(version)).commitlog
    full = log.to_arrow(["commitLogOffset"]).column(0).to_pylist()
    got = []
    for seg in log.segments:
        step = split if split > 100 else 2048 + split  # keep the tiny splits' run time modest
        for begin in range(0, seg.size, step):
            end = min(begin + step, seg.size)
            p = find_record_start(seg, begin, end)
            if p is None:
                continue
            assert begin <= p < end
            scan = ColumnarScan(log, columns=["commitLogOffset"], start=seg.start_offset + p,
                                stop=seg.start_offset + end)
            got += scan.read_all().column(0).to_pylist()
    assert got == full


def test_resync_skips_record_lookalikes_inside_bodies(tmp_path):
    """A body that holds a whole commit-log record is not taken for a record start."""
    inner = synth.encode_message(synth.MessageSpec(topic="Inner", body=b"i" * 50), 1234)
    specs = [synth.MessageSpec(topic="Outer", body=b"o" * 17 + inner + b"p" * 9, queue_offset=i) for i in range(20)]
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 20)
    log = rmqformats.open_store(tmp_path).commitlog
    seg = log.segments[0]
    starts = {m.file_offset for m in log.scan()}
    for begin in range(0, 2000, 7):
        p = find_record_start(seg, begin, seg.size)
        assert p is None or p in starts


def test_times_as_iso_text_and_naive_datetimes():
    import datetime as dt
    log = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog
    ms = sorted(m.store_timestamp for m in log.scan())[100]
    iso = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat().replace("+00:00", "Z")
    naive = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).replace(tzinfo=None)
    expected = log.to_arrow(["commitLogOffset"], since=ms).num_rows
    assert log.to_arrow(["commitLogOffset"], since=iso).num_rows == expected
    assert log.to_arrow(["commitLogOffset"], since=naive).num_rows == expected


def test_parallel_ranges_are_not_fooled_by_a_forged_record_in_a_body(tmp_path):
    """A body holding a record whose stored physical offset is its own position passes the resync's
    checks; the ranges are joined only where the previous range's walk really ended, so the scan is
    still the serial one."""
    inner = synth.encode_message(synth.MessageSpec(topic="Inner", body=b"i" * 40), 0)
    specs = [synth.MessageSpec(topic="Outer", body=b"o" * (i % 50) + inner + b"p" * 9, queue_offset=i)
             for i in range(200)]
    synth.write_commitlog(tmp_path / "commitlog", specs, segment_size=1 << 20)
    seg = tmp_path / "commitlog" / "00000000000000000000"
    data = bytearray(seg.read_bytes())
    at = data.find(inner)
    forged = 0
    while at >= 0:
        struct.pack_into(">q", data, at + 28, at)  # PHYSICALOFFSET := its own position
        forged += 1
        at = data.find(inner[:28], at + 1)
    seg.write_bytes(bytes(data))
    assert forged == 200
    log = rmqformats.open_store(tmp_path).commitlog
    starts = {m.file_offset for m in log.scan()}
    found = [find_record_start(log.segments[0], b, b + 300) for b in range(0, 40_000, 300)]
    fooled = sum(p is not None and p not in starts for p in found)
    assert fooled  # the resync alone can be fooled ...
    for range_size in (4096, 5000, 7919):
        assert_same(tmp_path, threads=2, range_size=range_size)  # ... the joined ranges are not


def test_decoding_does_not_import_pandas():
    """Workers stay lean: pandas (a quarter of a second, tens of MiB) is loaded only by to_pandas()."""
    import subprocess
    import sys
    code = ("import sys, rmqformats; s = rmqformats.open_store(sys.argv[1]); s.commitlog.to_arrow(); "
            "s.queues_to_arrow(batch_queues=True); s.index_to_arrow(); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(store_path("rocketmq-5.1.4"))], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == "False"


def test_repeated_property_names_keep_their_first_place_and_last_value():
    """Batch messages carry WAIT twice (5.1.4 vector): decoded like the broker's HashMap, in place."""
    log = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog
    rows = columnar_rows(log.to_arrow(["commitLogOffset", "properties", "propertiesString"]))
    repeated = [r for r in rows if r["propertiesString"].count("WAIT\x01") > 1]
    assert repeated
    for r, m in zip(rows, log.scan()):
        assert list(r["properties"].items()) == list(m.properties.items())


def test_the_walk_stores_exactly_the_records_check_record_passes():
    """Mutated records: the walk stores a record where the kernel's check passes it, and rejects it with a
    reason code otherwise; the typed error of decode_message is the one that reason words."""
    import numpy as np

    from rmqformats.walk import kernels as K
    from rmqformats.walk.record import record_error

    base = bytearray(synth.encode_message(synth.MessageSpec(topic="T", body=b"b" * 40, properties={"TAGS": "t"}),
                                          0))
    rng = random.Random(28)
    reasons = set()
    i32 = np.empty((K.N_I32, 1), np.int32)
    i64 = np.empty((K.N_I64, 1), np.int64)
    for _ in range(3000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = bytes(data[:rng.choice([len(data), rng.randrange(len(data))])]) + bytes(rng.randrange(0, 16))
        buf = np.frombuffer(data, np.uint8)
        n = K.walk_records(buf, 0, len(buf), True, 1, 1, i32, i64, 0)[0]
        reason, value = K.check_record(buf, 0, len(buf))
        reasons.add(int(reason))
        assert (n == 1) == (reason == K.REC_OK)
        if n == 1:
            assert rmqformats.decode_message(data, 0).store_size == value
            continue
        size = int.from_bytes(data[:4], "big", signed=True) if len(data) >= 4 else 0
        expected = record_error(int(reason), int(value), "seg", 0, size)
        with pytest.raises(rmqformats.RecordError) as err:
            rmqformats.decode_message(data, 0, "seg")
        assert (type(err.value), str(err.value)) == (type(expected), str(expected))
    assert reasons >= {K.REC_OK, K.REC_BAD_MAGIC, K.REC_SMALL, K.REC_PAST_END, K.REC_LENGTHS}


@pytest.mark.parametrize("hosts", [1, 3, 10, 64, 65, 300])
def test_host_texts_with_many_hosts_in_a_batch(tmp_path, hosts):
    """``bornHost`` of a batch of many producers (fewer, as many as, and more than the kernel's cache holds,
    so that hosts share its slots): each message's own ``ip:port``, as the object API gives it."""
    rng = random.Random(hosts)
    peers = [(f"{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
              rng.choice([0, 1, 80, 65535, rng.randrange(1 << 16)])) for _ in range(hosts)]
    specs = [synth.MessageSpec(topic="T", body=b"b", queue_offset=i, born_host=rng.choice(peers)) for i in range(2000)]
    synth.write_commitlog(tmp_path / "s" / "commitlog", specs, segment_size=1 << 20)
    log = rmqformats.open_store(tmp_path / "s").commitlog
    got = log.to_arrow(["bornHost"], batch_size=700).column(0).to_pylist()
    assert got == [f"{s.born_host[0]}:{s.born_host[1]}" for s in specs]
    assert got == [m.born_host for m in log.scan()]

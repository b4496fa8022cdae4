"""The Python API decodes every message of the real vectors exactly as RocketMQ does."""

from __future__ import annotations

import pytest

import rmqformats
from rmqformats import EndReason
from rmqformats.message import format_address

from conftest import store_path, truth_records
from truthcmp import b64, count_mismatches

_MAGIC = {1: -626843481, 2: -626843477}


def api_row(m: rmqformats.Message) -> dict:
    row = {
        "commitlogOffset": m.commitlog_offset, "magicCode": _MAGIC[m.version], "storeSize": m.store_size,
        "bodyCRC": m.body_crc, "queueId": m.queue_id, "flag": m.flag, "queueOffset": m.queue_offset,
        "physicalOffset": m.physical_offset, "sysFlag": m.sys_flag, "bornTimestamp": m.born_timestamp,
        "bornHost": format_address(m.born_address), "bornPort": m.born_port,
        "storeTimestamp": m.store_timestamp, "storeHost": format_address(m.store_address),
        "storePort": m.store_port, "reconsumeTimes": m.reconsume_times,
        "preparedTransactionOffset": m.prepared_transaction_offset, "topic": m.topic,
        "properties": m.properties, "propertiesString": m.properties_raw, "msgId": m.msg_id,
        "uniqKey": m.uniq_key, "tags": m.tags, "keys": m.properties.get("KEYS"),
        "bodyRawBase64": b64(m.body_raw), "bodyLength": len(m.body_raw),
    }
    if m.is_compressed:
        row["bodyDecompressedBase64"] = b64(m.body)
    row["delayTimeLevel"] = m.delay_time_level
    if m.inner_messages():
        row["innerMessages_MessageDecoder.decodeMessages"] = [
            {"topic": None, "flag": i.flag, "properties": i.properties, "bodyBase64": b64(i.body)}
            for i in m.inner_messages()]
    return row


def test_every_message_matches_truth(version):
    truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    scan = rmqformats.open_store(store_path(version)).commitlog.scan(verify_crc=True)
    n, details = count_mismatches([api_row(m) for m in scan], truth)
    assert n == 0, details


def test_blank_records_and_data_end_match_truth(version):
    records = truth_records(version)
    scan = rmqformats.open_store(store_path(version)).commitlog.scan()
    for _ in scan:
        pass
    blanks = [(t["commitlogOffset"], t["totalSize"]) for t in records if t["kind"] == "BLANK"]
    assert [(b.commitlog_offset, b.length) for b in scan.blanks] == blanks
    last = records[-1]
    # The broker's recovery ends right after the last record it accepted, in the zero tail.
    assert scan.end.reason is EndReason.ZERO_TAIL
    assert scan.end.offset == last["commitlogOffset"] + last["totalSize"]
    assert scan.end.segment.endswith(last["file"])


def test_accessors(version):
    truth = {t["commitlogOffset"]: t for t in truth_records(version) if t["kind"] == "MESSAGE"}
    log = rmqformats.open_store(store_path(version)).commitlog
    for m in log:
        t = truth[m.commitlog_offset]
        assert m.keys == [k for k in (t["keys"] or "").split(" ") if k]
        assert m.tags == t["tags"]
        assert m.uniq_key == t["uniqKey"]
        host = t["storeHost"]
        assert m.store_host == (f"[{host}]:{t['storePort']}" if ":" in host else f"{host}:{t['storePort']}")
        assert len(m.msg_id) == (56 if ":" in host else 32)
        assert m.store_time.tzinfo is not None
        assert int(m.store_time.timestamp() * 1000) == t["storeTimestamp"]
        assert m.born_time.utcoffset().total_seconds() == 0


def test_record_crc_property_matches_truth(version):
    """5.3.3 (enabledAppendPropCRC) ends every record with __CRC32#, which RocketMQ verified for each one."""
    truth = {t["commitlogOffset"]: t for t in truth_records(version) if t["kind"] == "MESSAGE"}
    with_crc = {o for o, t in truth.items() if "propertyCRC32" in t}
    assert with_crc in (set(), set(truth))
    for m in rmqformats.open_store(store_path(version)).commitlog:
        t = truth[m.commitlog_offset]
        if m.commitlog_offset in with_crc:
            digits = t["propertyCRC32"]
            assert m.properties["__CRC32#"] == digits and m.properties_raw.endswith(f"__CRC32#\x01{digits}\x02")
            assert m.record_crc == int(digits[::-1]) and m.record_crc_ok is True
        else:
            assert "__CRC32#" not in m.properties and m.record_crc is None and m.record_crc_ok is None


def test_read_by_offset_and_msg_id(version):
    log = rmqformats.open_store(store_path(version)).commitlog
    for t in truth_records(version):
        if t["kind"] != "MESSAGE":
            continue
        assert log.read(t["commitlogOffset"]).msg_id == t["msgId"]
        assert log.read_msg_id(t["msgId"]).commitlog_offset == t["commitlogOffset"]


def test_read_errors(version):
    log = rmqformats.open_store(store_path(version)).commitlog
    with pytest.raises(rmqformats.MessageNotFoundError, match="no message starts here"):
        log.read(1)  # inside the first record
    with pytest.raises(rmqformats.MessageNotFoundError, match="in no segment"):
        log.read(10 ** 12)
    blank = next(t for t in truth_records(version) if t["kind"] == "BLANK")
    with pytest.raises(rmqformats.MessageNotFoundError, match=r"a BLANK record"):
        log.read(blank["commitlogOffset"])
    last = truth_records(version)[-1]
    with pytest.raises(rmqformats.MessageNotFoundError, match=r"zero-filled tail"):
        log.read(last["commitlogOffset"] + last["totalSize"])
    with pytest.raises(rmqformats.InvalidMessageIdError):
        log.read_msg_id("ABC")
    with pytest.raises(rmqformats.MessageNotFoundError, match="another store host"):
        log.read_msg_id("0A0000010000FFFF0000000000000000")


def test_open_store_forms(version):
    root = store_path(version)
    by_root = [m.commitlog_offset for m in rmqformats.open_store(root).commitlog]
    by_dir = [m.commitlog_offset for m in rmqformats.open_store(root / "commitlog").commitlog]
    assert by_root == by_dir
    segment = sorted((root / "commitlog").iterdir())[0]
    one = rmqformats.open_store(segment).commitlog
    offsets = [m.commitlog_offset for m in one.scan()]
    assert offsets == [o for o in by_root if o < segment.stat().st_size]
    with pytest.raises(rmqformats.StoreNotFoundError):
        rmqformats.open_store(root / "config")


def test_sample_store_is_the_514_vector():
    sample = [m.msg_id for m in rmqformats.open_store(rmqformats.sample_store_path()).commitlog]
    assert sample == [t["msgId"] for t in truth_records("rocketmq-5.1.4") if t["kind"] == "MESSAGE"]


def test_read_damaged_records_names_file_and_offset(store_copy, version):
    rec = next(t for t in truth_records(version) if t["kind"] == "MESSAGE" and t["commitlogOffset"] > 1000)
    seg = store_copy / "commitlog" / rec["file"]
    pos = rec["commitlogOffset"] - int(rec["file"])
    data = bytearray(seg.read_bytes())
    original = bytes(data)
    cases = [
        ((0x7FFFFFF0).to_bytes(4, "big"), rmqformats.TruncatedRecordError, "runs past the end of the file"),
        ((4).to_bytes(4, "big"), rmqformats.RecordSizeError, "smaller than a record header"),
        ((rec["storeSize"] + 4).to_bytes(4, "big"), rmqformats.RecordSizeError, "disagrees with the field lengths"),
    ]
    for head, error, text in cases:
        data[pos:pos + 4] = head
        seg.write_bytes(bytes(data))
        with rmqformats.open_store(store_copy).commitlog as log:
            with pytest.raises(error, match=text) as exc:
                log.read(rec["commitlogOffset"])
        assert exc.value.offset == pos and str(exc.value).startswith(f"commitlog/{rec['file']} @ 0x{pos:x}:")
        data[:] = original
    # A record cut by the end of the file.
    seg.write_bytes(original[:pos + 20])
    with pytest.raises(rmqformats.TruncatedRecordError) as exc:
        rmqformats.open_store(store_copy).commitlog.read(rec["commitlogOffset"])
    assert exc.value.offset == pos
    # Reads keep a few segment files open and close them on close().
    seg.write_bytes(original)
    log = rmqformats.open_store(store_copy).commitlog
    assert [log.read(t["commitlogOffset"]).msg_id for t in truth_records(version) if t["kind"] == "MESSAGE"] == [
        t["msgId"] for t in truth_records(version) if t["kind"] == "MESSAGE"]
    assert 0 < len(log._fds) <= 8
    log.close()
    assert not log._fds and log.read(rec["commitlogOffset"]).msg_id == rec["msgId"]

"""The generated Kaitai parser and construct schema decode every real message as RocketMQ does."""

from __future__ import annotations

import base64
import zlib

import pytest

from rmqformats import compression, reference
from rmqformats.message import format_address, offset_msg_id
from rmqformats.properties import parse_properties

from conftest import store_path, truth_records
from truthcmp import b64, count_mismatches

#: ``BLANK_MAGIC_CODE`` as RocketMQ's Java (and the spec's signed magic) holds it.
BLANK_MAGIC_CODE = -875286124


def _kaitai_batch(body: bytes) -> list[tuple]:
    from rmqformats.generated.kaitai.rocketmq_message_batch import RocketmqMessageBatch
    return [(i.flag, i.properties, i.body) for i in RocketmqMessageBatch.from_bytes(body).messages]


def _construct_batch(body: bytes) -> list[tuple]:
    from rmqformats.generated.construct.rocketmq_message_batch import rocketmq_message_batch
    return [(i.flag, i.properties, i.body) for i in rocketmq_message_batch.parse(body).messages]


def _row(offset: int, len_record: int, magic: int, m, batch) -> dict:
    """A truth-shaped dict from a parsed ``message`` (Kaitai object or construct container)."""
    get = (lambda o, k: o[k]) if isinstance(m, dict) else getattr
    sys_flag = reference.sys_flag_value(get(m, "sys_flag"))
    born, store = get(m, "born_host"), get(m, "store_host")
    props = parse_properties(get(m, "properties"))
    body = bytes(get(m, "body"))
    row = {
        "commitlogOffset": offset, "magicCode": magic, "storeSize": len_record,
        "bodyCRC": get(m, "body_crc"), "queueId": get(m, "queue_id"), "flag": get(m, "flag"),
        "queueOffset": get(m, "queue_offset"), "physicalOffset": get(m, "ofs_physical"),
        "sysFlag": sys_flag, "bornTimestamp": get(m, "born_timestamp"),
        "bornHost": format_address(get(born, "address")), "bornPort": get(born, "port"),
        "storeTimestamp": get(m, "store_timestamp"), "storeHost": format_address(get(store, "address")),
        "storePort": get(store, "port"), "reconsumeTimes": get(m, "reconsume_times"),
        "preparedTransactionOffset": get(m, "ofs_prepared_transaction"), "topic": get(m, "topic"),
        "properties": props, "propertiesString": get(m, "properties"),
        "msgId": offset_msg_id(get(store, "address"), get(store, "port"), get(m, "ofs_physical")),
        "uniqKey": props.get("UNIQ_KEY"), "tags": props.get("TAGS"), "keys": props.get("KEYS"),
        "bodyRawBase64": b64(body), "bodyLength": len(body),
    }
    if sys_flag & 1:
        kind = {0: "zlib", 3: "zlib", 1: "lz4", 2: "zstd"}[(sys_flag >> 8) & 7]
        row["bodyDecompressedBase64"] = b64(compression.decompress(body, kind))
    row["delayTimeLevel"] = int(props.get("DELAY") or 0)
    if sys_flag & 0x80:  # INNER_BATCH_FLAG
        row["innerMessages_MessageDecoder.decodeMessages"] = [
            {"topic": None, "flag": flag, "properties": parse_properties(text), "bodyBase64": b64(data)}
            for flag, text, data in batch(body)]
    return row


def _decode_store(version: str, reader, magic_of, batch) -> tuple[list[dict], list[tuple[int, int, int]]]:
    rows, ends = [], []
    for seg in sorted((store_path(version) / "commitlog").iterdir()):
        base = int(seg.name)
        for pos, rec in reader(seg):
            get = (lambda o, k: o[k]) if isinstance(rec, dict) else getattr
            magic = magic_of(get(rec, "magic"))
            if get(rec, "is_message"):
                rows.append(_row(base + pos, get(rec, "len_record"), magic, get(rec, "body"), batch))
            else:
                ends.append((base + pos, get(rec, "len_record"), magic))
    return rows, ends


READERS = {
    "kaitai": (reference.kaitai_records, int, _kaitai_batch),
    "construct": (reference.construct_records, lambda m: m.intvalue if hasattr(m, "intvalue") else int(m),
                  _construct_batch),
}


@pytest.mark.parametrize("parser", sorted(READERS))
def test_every_message_matches_truth(version, parser):
    records = truth_records(version)
    rows, ends = _decode_store(version, *READERS[parser])
    n, details = count_mismatches(rows, [t for t in records if t["kind"] == "MESSAGE"])
    assert n == 0, details
    # Each full segment ends in its BLANK record; the last one in the zero-filled tail right
    # after the last message, where the broker's recovery stops.
    blanks = [(t["commitlogOffset"], t["totalSize"], BLANK_MAGIC_CODE) for t in records if t["kind"] == "BLANK"]
    last = records[-1]
    assert ends == blanks + [(last["commitlogOffset"] + last["totalSize"], 0, 0)]


def test_kaitai_len_record_computed_equals_total_size(version):
    """The spec's calMsgLength instance agrees with TOTALSIZE for every real record."""
    for seg in sorted((store_path(version) / "commitlog").iterdir()):
        for _, rec in reference.kaitai_records(seg):
            if rec.is_message:
                assert rec.body.len_record_computed == rec.len_record


def test_spec_doc_vector_101_bytes():
    """The reference's hand-computed V1 record parses to the values it was built from."""
    data = bytes.fromhex(
        "00000065daa320a758932aac000000000000000000000000000000000000000000000000000000000000018bcfe568"
        "007f0000010000d4310000018bcfe5687b7f00000100002a9f00000000000000000000000000000002686901540007"
        "54414753016102")
    assert zlib.crc32(b"hi") & 0x7FFFFFFF == 0x58932AAC
    from rmqformats.generated.construct import rocketmq_commitlog as cs
    rec = cs.record.parse(data)
    assert (rec.len_record, rec.body.topic, rec.body.body, rec.body.properties) == (101, "T", b"hi", "TAGS\x01a\x02")
    assert base64.b64encode(cs.record.build(rec)) == base64.b64encode(data)

"""Records built through the construct schemas parse back equal with every parser,
and rebuild RocketMQ's own bytes from the values the vectors hold."""

from __future__ import annotations

import base64
import io
import itertools

import pytest
from kaitaistruct import KaitaiStream

import rmqformats
from rmqformats import synth
from rmqformats.generated.construct import rocketmq_commitlog as cs
from rmqformats.generated.kaitai.rocketmq_commitlog import RocketmqCommitlog
from rmqformats.reference import sys_flag_value

from conftest import store_path, truth_records

HOSTS = {4: ("192.0.2.10", 54321), 6: ("2001:db8::10", 54322)}
STORES = {4: ("127.0.0.1", 10911), 6: ("2001:db8::53", 10911)}
PROPS = {
    "none": {},
    "plain": {"UNIQ_KEY": "C0A80001000018B4AAC2", "TAGS": "TagA", "KEYS": "k1 k2", "城市": "杭州"},
    "trailing": {"TAGS": "TagB", "KEYS": "only"},
}
VARIANTS = list(itertools.product([1, 2], [4, 6], [4, 6], [None, "zlib-legacy", "zlib", "lz4", "zstd"],
                                  sorted(PROPS)))


def _kaitai(data: bytes):
    return RocketmqCommitlog.Record(KaitaiStream(io.BytesIO(data)))


def _fields(m, get) -> tuple:
    return (get(m, "body_crc"), get(m, "queue_id"), get(m, "flag"), get(m, "queue_offset"),
            get(m, "ofs_physical"), get(m, "born_timestamp"), bytes(get(get(m, "born_host"), "address")),
            get(get(m, "born_host"), "port"), get(m, "store_timestamp"),
            bytes(get(get(m, "store_host"), "address")), get(get(m, "store_host"), "port"),
            get(m, "reconsume_times"), get(m, "ofs_prepared_transaction"), bytes(get(m, "body")),
            get(m, "topic"), get(m, "properties"))


@pytest.mark.parametrize("version, born, store, compression, props", VARIANTS)
def test_variant_round_trip(version, born, store, compression, props):
    spec = synth.MessageSpec(
        topic="TopicRoundTrip", body="消息 body ".encode() * 40, properties=PROPS[props],
        trailing_separator=props == "trailing", queue_id=3, flag=7, queue_offset=12,
        born_host=HOSTS[born], store_host=STORES[store], reconsume_times=2,
        prepared_transaction_offset=99, sys_flag=0x8, compression=compression, version=version)
    data = synth.encode_message(spec, 123456)

    k = _kaitai(data)
    c = cs.record.parse(data)
    api = rmqformats.decode_message(data, 0)
    assert k.len_record == c.len_record == api.store_size == len(data)
    assert k.body.len_record_computed == len(data)
    assert int(k.magic) == c.magic.intvalue == (-626843477 if version == 2 else -626843481)  # MESSAGE_MAGIC_CODE(_V2)
    kf, cf = _fields(k.body, getattr), _fields(c.body, lambda o, n: o[n])
    assert kf == cf
    assert kf == (api.body_crc, api.queue_id, api.flag, api.queue_offset, api.physical_offset,
                  api.born_timestamp, api.born_address, api.born_port, api.store_timestamp,
                  api.store_address, api.store_port, api.reconsume_times,
                  api.prepared_transaction_offset, api.body_raw, api.topic, api.properties_raw)
    assert sys_flag_value(k.body.sys_flag) == sys_flag_value(c.body.sys_flag) == api.sys_flag
    assert api.version == version and api.transaction_type == "commit"
    assert api.body == spec.body and api.body_crc_ok
    assert api.compression == (None if compression is None else compression.replace("-legacy", ""))
    assert api.properties == PROPS[props]
    assert api.properties_raw.endswith("\x02") == (props == "trailing")
    assert len(api.msg_id) == (56 if store == 6 else 32)
    assert cs.record.build(c) == data


def test_blank_round_trip():
    data = synth.encode_blank(197486)
    assert data == bytes.fromhex("0003036ecbd43194")
    k, c = _kaitai(data), cs.record.parse(data)
    assert (k.len_record, k.magic.name, k.is_message, k.len_padding) == (197486, "blank", False, 197478)
    assert (c.len_record, c.magic, c.is_message, c.len_padding, c.body) == (197486, "blank", False, 197478, None)
    assert cs.record.build(c) == data


def test_crc32_property_round_trip():
    spec = synth.MessageSpec(topic="TopicCrc", body=b"payload", properties={"TAGS": "a"}, crc32_property=True)
    data = synth.encode_message(spec, 4096)
    msg = rmqformats.decode_message(data, 0)
    assert msg.properties_raw.endswith("\x02") and "__CRC32#" in msg.properties
    assert msg.record_crc_ok is True
    msg.verify_crc()
    msg.verify_crc(force_verify_prop_crc=True)
    # Any change to the record bytes before the property breaks the record CRC, not the body CRC: the
    # broker's default check (BODYCRC) passes it, its forceVerifyPropCRC check does not.
    bad = bytearray(data)
    bad[16] ^= 0xFF  # FLAG
    damaged = rmqformats.decode_message(bytes(bad), 0, "commitlog/00000000000000000000")
    assert damaged.body_crc_ok and damaged.record_crc_ok is False
    damaged.verify_crc()
    with pytest.raises(rmqformats.CrcMismatchError, match=r"@ 0x0: record CRC .*forceVerifyPropCRC"):
        damaged.verify_crc(force_verify_prop_crc=True)
    # forceVerifyPropCRC fails a record without the property, and checks no body CRC.
    plain = rmqformats.decode_message(synth.encode_message(synth.MessageSpec(topic="T", body=b"x"), 4096), 0)
    with pytest.raises(rmqformats.CrcMismatchError, match="no __CRC32# property"):
        plain.verify_crc(force_verify_prop_crc=True)


def _spec_from_truth(t: dict) -> synth.MessageSpec:
    host = lambda h, p: (h, p)  # noqa: E731
    return synth.MessageSpec(
        topic=t["topic"], body=base64.b64decode(t["bodyRawBase64"]), properties=t["propertiesString"],
        queue_id=t["queueId"], flag=t["flag"], queue_offset=t["queueOffset"],
        born_timestamp=t["bornTimestamp"], store_timestamp=t["storeTimestamp"],
        born_host=host(t["bornHost"], t["bornPort"]), store_host=host(t["storeHost"], t["storePort"]),
        reconsume_times=t["reconsumeTimes"], prepared_transaction_offset=t["preparedTransactionOffset"],
        sys_flag=t["sysFlag"], version=2 if t["magicCode"] == -626843477 else 1)


def test_rebuilds_rocketmq_bytes(version):
    """Every real record is rebuilt byte for byte from its decoded values."""
    segments = {p.name: p.read_bytes() for p in (store_path(version) / "commitlog").iterdir()}
    mismatched = []
    for t in truth_records(version):
        real = segments[t["file"]][t["fileOffset"]:t["fileOffset"] + t["totalSize"]]
        if t["kind"] == "BLANK":
            assert synth.encode_blank(t["totalSize"]) == real[:8]
            continue
        if synth.encode_message(_spec_from_truth(t), t["physicalOffset"]) != real:
            mismatched.append(t["commitlogOffset"])
    assert mismatched == []


def test_inner_batches_rebuild_rocketmq_bytes():
    """Every inner-batch body of the 5.1.4 vector is rebuilt from its decoded messages."""
    log = rmqformats.open_store(store_path("rocketmq-5.1.4")).commitlog
    batches = [m for m in log if m.has_flag("is_inner_batch")]
    assert len(batches) == 2
    for m in batches:
        inner = m.inner_messages()
        assert len(inner) == int(m.properties["INNER_NUM"]) == 4
        assert int(m.properties["INNER_BASE"]) == m.queue_offset
        assert synth.encode_batch((i.flag, i.body, i.properties_raw) for i in inner) == m.body


def test_inner_batch_round_trip_and_damage():
    body = synth.encode_batch([(0, b"first", {"TAGS": "a"}), (7, b"", {}), (1, "二".encode() * 3, {"KEYS": "k"})])
    spec = synth.MessageSpec(topic="TopicBatchCQ", body=body, sys_flag=0xC0, properties={"INNER_NUM": "3"})
    msg = rmqformats.decode_message(synth.encode_message(spec, 0), 0, "commitlog/00000000000000000000")
    assert [(i.index, i.flag, i.body, i.properties) for i in msg.inner_messages()] == [
        (0, 0, b"first", {"TAGS": "a"}), (1, 7, b"", {}), (2, 1, "二".encode() * 3, {"KEYS": "k"})]
    from rmqformats.batch import decode_batch
    for cut in range(1, len(body)):  # every cut fails with a typed error or ends at an item boundary
        try:
            got = decode_batch(body[:cut], "commitlog/00000000000000000000", 0x40)
        except rmqformats.RecordSizeError as exc:
            assert str(exc).startswith("commitlog/00000000000000000000 @ 0x40: inner batch item ")
        else:
            assert len(got) < 3  # only a cut at an item boundary decodes, with fewer messages
    assert rmqformats.decode_message(synth.encode_message(
        synth.MessageSpec(topic="T", body=body), 0), 0).inner_messages() == []  # no flag, no unwrapping

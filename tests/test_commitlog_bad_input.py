"""Damaged commit logs end in a typed error or a documented stop that names file and offset."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib

import lz4.frame
import pytest
import zstandard

import rmqformats
from rmqformats import EndReason
from rmqformats.message import Message

from conftest import truth_records


def _messages(version):
    return [t for t in truth_records(version) if t["kind"] == "MESSAGE"]


def _scan(path, **kw):
    scan = rmqformats.open_store(path).commitlog.scan(**kw)
    offsets = [m.commitlog_offset for m in scan]
    return offsets, scan.end


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_truncated_at_every_byte_of_last_record(store_copy, version):
    last = _messages(version)[-1]
    seg = store_copy / "commitlog" / last["file"]
    pos, size = last["fileOffset"], last["totalSize"]
    expected = [t["commitlogOffset"] for t in _messages(version)][:-1]
    for cut in range(pos + size - 1, pos - 1, -1):
        os.truncate(seg, cut)
        offsets, end = _scan(store_copy)
        assert offsets == expected, cut
        assert end.offset == last["commitlogOffset"], cut
        assert end.file_offset == pos and end.segment.endswith(last["file"])
        if cut == pos:
            assert end.reason is EndReason.END_OF_FILE
            continue
        assert end.reason is EndReason.TRUNCATED, cut
        with pytest.raises(rmqformats.TruncatedRecordError) as err:
            _scan(store_copy, strict=True)
        assert err.value.offset == pos
        assert str(err.value).startswith(f"commitlog/{last['file']} @ 0x{pos:x}: ")


def test_truncated_inside_blank_header_of_full_segment(store_copy, version):
    blank = next(t for t in truth_records(version) if t["kind"] == "BLANK")
    seg = store_copy / "commitlog" / blank["file"]
    for cut in range(blank["fileOffset"] + 7, blank["fileOffset"], -1):
        os.truncate(seg, cut)
        offsets, end = _scan(store_copy)
        assert end.reason is EndReason.TRUNCATED
        assert (end.offset, end.file_offset) == (blank["commitlogOffset"], blank["fileOffset"])
        assert offsets[-1] < blank["commitlogOffset"]


@pytest.mark.parametrize("index", [0, 1, 100])
def test_flipped_magic(store_copy, version, index):
    rec = _messages(version)[index]
    seg = store_copy / "commitlog" / rec["file"]
    with open(seg, "rb") as f:
        f.seek(rec["fileOffset"] + 4)
        magic = f.read(4)
    _patch(seg, rec["fileOffset"] + 4, bytes([magic[0] ^ 0x01]) + magic[1:])
    offsets, end = _scan(store_copy)
    assert offsets == [t["commitlogOffset"] for t in _messages(version)][:index]
    assert end.reason is EndReason.BAD_MAGIC and end.offset == rec["commitlogOffset"]
    assert "bad magic 0xdba320a7" in end.detail
    with pytest.raises(rmqformats.BadMagicError) as err:
        _scan(store_copy, strict=True)
    assert str(err.value) == (f"commitlog/{rec['file']} @ 0x{rec['fileOffset']:x}: bad magic 0xdba320a7 "
                              f"(expected 0xdaa320a7 or 0xdaa320ab)")


@pytest.mark.parametrize("size, error, reason", [
    (0x7FFFFFFF, rmqformats.TruncatedRecordError, EndReason.TRUNCATED),
    (262144, rmqformats.TruncatedRecordError, EndReason.TRUNCATED),
    (-5, rmqformats.RecordSizeError, EndReason.BAD_SIZE),
    (4, rmqformats.RecordSizeError, EndReason.BAD_SIZE),
    (100, rmqformats.RecordSizeError, EndReason.BAD_SIZE),
    ("+1", rmqformats.RecordSizeError, EndReason.BAD_SIZE),
])
def test_bad_size_field(store_copy, version, size, error, reason):
    rec = _messages(version)[5]
    if size == "+1":
        size = rec["totalSize"] + 1
    _patch(store_copy / "commitlog" / rec["file"], rec["fileOffset"], struct.pack(">i", size))
    offsets, end = _scan(store_copy)
    assert len(offsets) == 5
    assert end.reason is reason and end.offset == rec["commitlogOffset"]
    with pytest.raises(error) as err:
        _scan(store_copy, strict=True)
    assert err.value.offset == rec["fileOffset"] and rec["file"] in str(err.value)


def test_negative_topic_length(store_copy, version):
    rec = _messages(version)[0]  # V1, IPv4 hosts: topic length byte follows the body
    at = rec["fileOffset"] + 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + rec["bodyLength"]
    _patch(store_copy / "commitlog" / rec["file"], at, b"\xf0")
    offsets, end = _scan(store_copy)
    assert offsets == [] and end.reason is EndReason.BAD_SIZE and "negative topic length -16" in end.detail


def test_body_crc_mismatch(store_copy, version):
    rec = next(t for t in _messages(version) if t["bodyLength"] > 0 and not t["sysFlag"] & 1)
    body_at = rec["fileOffset"] + rec["totalSize"] - rec["bodyLength"] - len(rec["topic"]) - 3 - \
        len(rec["propertiesString"].encode())
    seg = store_copy / "commitlog" / rec["file"]
    with open(seg, "rb") as f:
        f.seek(body_at)
        assert f.read(rec["bodyLength"]) == __import__("base64").b64decode(rec["bodyRawBase64"])
    _patch(seg, body_at, b"X")
    # Without CRC checks the record still decodes, and says its CRC is wrong.
    msg = rmqformats.open_store(store_copy).commitlog.read(rec["commitlogOffset"])
    assert not msg.body_crc_ok
    with pytest.raises(rmqformats.CrcMismatchError, match=r"@ 0x[0-9a-f]+: body CRC"):
        msg.verify_crc()
    offsets, end = _scan(store_copy)
    assert end.reason is EndReason.ZERO_TAIL
    offsets, end = _scan(store_copy, verify_crc=True)
    assert end.reason is EndReason.CRC_MISMATCH and end.offset == rec["commitlogOffset"]
    assert offsets == [t["commitlogOffset"] for t in _messages(version) if t["commitlogOffset"] < rec["commitlogOffset"]]
    with pytest.raises(rmqformats.CrcMismatchError):
        _scan(store_copy, verify_crc=True, strict=True)


def test_zero_filled_next_segment_and_empty_segment(store_copy, version):
    """A crash leaves an all-zero pre-allocated segment; an empty file is a clean end too."""
    full = _scan(store_copy)
    names = sorted(os.listdir(store_copy / "commitlog"))
    last = names[-1]
    nxt = f"{int(last) + 262144:020d}"
    with open(store_copy / "commitlog" / nxt, "wb") as f:
        f.truncate(262144)
    assert _scan(store_copy) == full
    # Without its zero tail data, the last real segment ends at the start of the zero segment.
    os.remove(store_copy / "commitlog" / last)
    offsets, end = _scan(store_copy)
    assert end.reason is EndReason.ZERO_TAIL and end.offset == int(nxt) and end.file_offset == 0
    open(store_copy / "commitlog" / nxt, "wb").close()
    offsets, end = _scan(store_copy)
    assert end.reason is EndReason.END_OF_FILE and end.offset == int(nxt)


def test_files_are_opened_read_only(store_copy, version):
    files = sorted((store_copy / "commitlog").iterdir())
    before = {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    for f in files:
        f.chmod(0o444)
    (store_copy / "commitlog").chmod(0o555)
    try:
        log = rmqformats.open_store(store_copy).commitlog
        assert sum(1 for _ in log.scan(verify_crc=True)) == len(_messages(version))
        log.read(0)
    finally:
        (store_copy / "commitlog").chmod(0o755)
    assert {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files} == before


def test_no_store():
    with pytest.raises(rmqformats.StoreNotFoundError, match="no such file"):
        rmqformats.open_store("/nonexistent/store")


def _message(body: bytes, sys_flag: int) -> Message:
    return Message(0, 0, 1, 0, 0, 0, 0, 0, sys_flag, 0, b"\x7f\0\0\1", 1, 0, b"\x7f\0\0\1", 2, 0, 0,
                   body, "T", "", "commitlog/00000000000000000000", 0x40)


@pytest.mark.parametrize("sys_flag, packer", [
    (0x001, zlib.compress), (0x301, zlib.compress), (0x101, lz4.frame.compress),
    (0x201, zstandard.ZstdCompressor().compress),
    (0x201, zstandard.ZstdCompressor(write_content_size=False).compress),
])
def test_decompression_is_bounded(sys_flag, packer):
    payload = b"\0" * (4 << 20)
    msg = _message(packer(payload), sys_flag)
    assert msg.decompressed_body() == payload
    with pytest.raises(rmqformats.DecompressionError, match=r"^commitlog/0{20} @ 0x40: .*more than 1048576"):
        msg.decompressed_body(max_size=1 << 20)


@pytest.mark.parametrize("sys_flag", [0x001, 0x101, 0x201, 0x301, 0x501])
def test_corrupt_or_unknown_compression(sys_flag):
    msg = _message(b"\x00garbage, not a compressed stream", sys_flag)
    with pytest.raises(rmqformats.DecompressionError, match=r"^commitlog/0{20} @ 0x40: "):
        msg.body


@pytest.mark.parametrize("packer, sys_flag", [(zlib.compress, 1), (lz4.frame.compress, 0x101),
                                              (zstandard.ZstdCompressor().compress, 0x201),
                                              (zstandard.ZstdCompressor(write_content_size=False).compress, 0x201)])
def test_truncated_compressed_body(packer, sys_flag):
    data = packer(b"hello rocketmq " * 1000)
    with pytest.raises(rmqformats.DecompressionError):
        _message(data[: len(data) // 2], sys_flag).body


def test_lz4_bodies_after_bad_ones():
    """Each thread reuses one lz4 context: a body that does not decompress (cut after a header that declares
    its size, corrupt, past the bound) leaves nothing behind for the next, with or without a declared size."""
    text = b"hello rocketmq " * 400
    sized = lz4.frame.compress(text, store_size=True)
    unsized = lz4.frame.compress(text, store_size=False)  # as the Java client writes frames
    corrupt = bytearray(unsized)
    corrupt[len(corrupt) // 2] ^= 0xFF
    bad = [(sized[:20], {}), (sized[: len(sized) // 2], {}), (bytes(corrupt), {}), (unsized, {"max_size": 100})]
    for data, options in bad:
        with pytest.raises(rmqformats.DecompressionError):
            _message(data, 0x101).decompressed_body(**options)
        for good in (unsized, sized, lz4.frame.compress(b"")):
            assert _message(good, 0x101).body == lz4.frame.decompress(good)
    # a frame followed by other bytes: the frame's content, as before
    assert _message(unsized + b"after", 0x101).body == text


# -- the reference parsers give typed errors on the same damage ----------------

from rmqformats import reference  # noqa: E402

REFERENCE_READERS = [reference.kaitai_records, reference.construct_records]


def _walk(reader, seg):
    return [pos for pos, _ in reader(seg)]


@pytest.mark.parametrize("reader", REFERENCE_READERS, ids=["kaitai", "construct"])
def test_reference_readers_on_truncated_last_record(store_copy, version, reader):
    last = _messages(version)[-1]
    seg = store_copy / "commitlog" / last["file"]
    pos, size = last["fileOffset"], last["totalSize"]
    for cut in range(pos + size - 1, pos - 1, -1):
        os.truncate(seg, cut)
        if cut == pos:
            assert _walk(reader, seg)[-1] < pos  # the file ends cleanly after the previous record
            continue
        with pytest.raises(rmqformats.RecordError) as err:
            _walk(reader, seg)
        assert err.value.offset == pos and str(err.value).startswith(f"commitlog/{last['file']} @ 0x{pos:x}: ")


@pytest.mark.parametrize("reader", REFERENCE_READERS, ids=["kaitai", "construct"])
@pytest.mark.parametrize("damage, error", [
    ("magic", rmqformats.BadMagicError),
    ("size-past-end", rmqformats.TruncatedRecordError),
    ("size-too-small", rmqformats.RecordError),
])
def test_reference_readers_on_bad_fields(store_copy, version, reader, damage, error):
    rec = _messages(version)[3]
    seg = store_copy / "commitlog" / rec["file"]
    if damage == "magic":
        _patch(seg, rec["fileOffset"] + 4, b"\x12\x34\x56\x78")
    elif damage == "size-past-end":
        _patch(seg, rec["fileOffset"], struct.pack(">i", 0x7FFFFFF0))
    else:
        _patch(seg, rec["fileOffset"], struct.pack(">i", 40))
    with pytest.raises(error) as err:
        _walk(reader, seg)
    assert err.value.offset == rec["fileOffset"]


def test_full_segment_cut_at_its_blank(store_copy, version):
    """A segment that is not the last and ends at a record boundary, without its BLANK, is truncated."""
    blank = next(t for t in truth_records(version) if t["kind"] == "BLANK")
    os.truncate(store_copy / "commitlog" / blank["file"], blank["fileOffset"])
    offsets, end = _scan(store_copy)
    assert end.reason is EndReason.TRUNCATED and end.offset == blank["commitlogOffset"]
    assert "without a BLANK record" in end.detail
    with pytest.raises(rmqformats.TruncatedRecordError):
        _scan(store_copy, strict=True)


@pytest.mark.parametrize("field, at, data", [("FLAG", 16, b"\x7f"), ("BORNTIMESTAMP", 47, b"\x55"),
                                             ("__CRC32# digit", -3, None)])
def test_only_the_property_crc_wrong(tmp_path, field, at, data):
    """The broker's default recovery checks BODYCRC only: it goes on past a record whose __CRC32# alone is
    wrong, and so do both decoders; forceVerifyPropCRC ends the data there, in both decoders alike."""
    import shutil
    from conftest import store_path
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    records = [t for t in _messages("rocketmq-5.3.3") if "__CRC32#" in t["properties"]]
    rec = records[len(records) // 2]
    seg = root / "commitlog" / rec["file"]
    pos = rec["fileOffset"] + (at if at >= 0 else rec["totalSize"] + at)
    old = seg.read_bytes()[pos]
    _patch(seg, pos, data if data is not None else bytes([ord("0") + (old - ord("0") + 1) % 10]))
    msg = rmqformats.open_store(root).commitlog.read(rec["commitlogOffset"])
    assert msg.body_crc_ok and msg.record_crc_ok is False
    expected, expected_end = _scan(store_path("rocketmq-5.3.3"), verify_crc=True)
    log = rmqformats.open_store(root).commitlog
    for threads in (1, 2):
        offsets, end = _scan(root, verify_crc=True)
        batches = log.batches(["commitLogOffset"], verify_crc=True, threads=threads, range_size=4096)
        assert offsets == expected and (end.offset, end.reason) == (expected_end.offset, expected_end.reason)
        assert batches.read_all().column(0).to_pylist() == expected and batches.end == end
        before = [o for o in expected if o < rec["commitlogOffset"]]
        offsets, end = _scan(root, verify_crc=True, force_verify_prop_crc=True)
        assert end.reason is EndReason.CRC_MISMATCH and end.offset == rec["commitlogOffset"]
        assert "forceVerifyPropCRC" in end.detail
        batches = log.batches(["commitLogOffset"], verify_crc=True, force_verify_prop_crc=True, threads=threads,
                              range_size=4096)
        assert batches.read_all().column(0).to_pylist() == offsets
        assert batches.end == end
        # Records before it without the property (written before enabledAppendPropCRC) end the data first.
        assert offsets == before[:len(offsets)]
        if all("__CRC32#" in t["properties"] for t in _messages("rocketmq-5.3.3") if t["kind"] == "MESSAGE"
               and t["commitlogOffset"] < rec["commitlogOffset"]):
            assert offsets == before

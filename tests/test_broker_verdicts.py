"""Where the data ends, exactly as the broker's checkMessageAndReturnSize decides it, on copies of the vector stores."""

from __future__ import annotations

import struct
import zlib

import pytest

import rmqformats
from rmqformats import EndReason
from rmqformats.commitlog import java_parse_int

from conftest import truth_records


def _messages(version):
    return [t for t in truth_records(version) if t["kind"] == "MESSAGE"]


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _both(store, **kw):
    """(offsets, end) of the object API's scan and of the columnar decoder, which must agree."""
    log = rmqformats.open_store(store).commitlog
    scan = log.scan(**kw)
    offsets = [m.commitlog_offset for m in scan]
    cscan = log.batches(["commitLogOffset"], **kw)
    coffsets = cscan.read_all().column("commitLogOffset").to_pylist()
    assert coffsets == offsets
    assert cscan.end == scan.end
    return offsets, scan.end


@pytest.mark.parametrize("text, value", [
    ("1", 1), ("+9", 9), ("-1", -1), ("007", 7), ("2147483647", 2**31 - 1), ("-2147483648", -2**31),
    ("\u0663", 3), ("\uff11\uff18", 18),  # Unicode decimal digits: Character.digit takes them
    ("2147483648", None), ("-2147483649", None), ("", None), ("+", None), ("-", None), (" 1", None),
    ("1 ", None), ("1_0", None), ("0x1", None), ("1.0", None), ("\U0001d7cf", None), ("9" * 5000, None),
])
def test_java_parse_int(text, value):
    assert java_parse_int(text) == value


@pytest.mark.parametrize("delay, accepted", [("1a", False), (" 1", False), ("-1", True), ("+9", True),
                                              ("\u0663", True), ("x", False)])
def test_schedule_topic_delay_that_is_not_an_integer_ends_the_data(store_copy, version, delay, accepted):
    rec = next(t for t in _messages(version)
               if t["topic"] == "SCHEDULE_TOPIC_XXXX" and t["properties"]["DELAY"] == "18")
    seg = store_copy / "commitlog" / rec["file"]
    with open(seg, "rb") as f:
        f.seek(rec["fileOffset"])
        data = f.read(rec["totalSize"])
    at = data.index(b"DELAY\x0118") + 6
    new = delay.encode().ljust(2, b"0")  # "x" is written as "x0": the record keeps its size
    assert len(new) == 2
    _patch(seg, rec["fileOffset"] + at, new)
    offsets, end = _both(store_copy)
    truth = [t["commitlogOffset"] for t in _messages(version)]
    if accepted:
        assert offsets == truth and end.reason.is_clean
        return
    assert offsets == [o for o in truth if o < rec["commitlogOffset"]]
    assert end.reason is EndReason.BAD_PROPERTY and end.offset == rec["commitlogOffset"]
    assert "DELAY" in end.detail and "not an integer" in end.detail
    with pytest.raises(rmqformats.PropertyValueError) as err:
        list(rmqformats.open_store(store_copy).commitlog.scan(strict=True))
    assert err.value.offset == rec["fileOffset"]
    with pytest.raises(rmqformats.PropertyValueError):
        rmqformats.open_store(store_copy).commitlog.batches(strict=True).read_all()


def test_empty_body_with_a_non_zero_body_crc_passes_the_crc_check(store_copy, version):
    rec = next(t for t in _messages(version) if t["bodyLength"] == 0)
    seg = store_copy / "commitlog" / rec["file"]
    _patch(seg, rec["fileOffset"] + 8, struct.pack(">i", 0x12345678))
    if "propertyCRC32" in rec:  # 5.2+: the record's own __CRC32# as the broker would have written it
        with open(seg, "rb") as f:
            f.seek(rec["fileOffset"])
            data = f.read(rec["totalSize"])
        digits = f"{zlib.crc32(data[:-20]) & 0x7FFFFFFF:010d}"[::-1]
        assert data[-20:].startswith(b"__CRC32#\x01")
        _patch(seg, rec["fileOffset"] + rec["totalSize"] - 11, digits.encode())
    offsets, end = _both(store_copy, verify_crc=True)
    assert offsets == [t["commitlogOffset"] for t in _messages(version)]
    assert end.reason is EndReason.ZERO_TAIL
    msg = rmqformats.open_store(store_copy).commitlog.read(rec["commitlogOffset"])
    assert msg.body_crc == 0x12345678 and not msg.body_crc_ok
    msg.verify_crc()  # the broker compares BODYCRC only for bodies longer than 0 bytes


def test_zeroed_header_mid_segment_says_that_data_follows(store_copy, version):
    msgs = _messages(version)
    rec = msgs[100]
    _patch(store_copy / "commitlog" / rec["file"], rec["fileOffset"], bytes(8))
    offsets, end = _both(store_copy)
    assert offsets == [t["commitlogOffset"] for t in msgs[:100]]  # the broker stops there too
    assert end.reason is EndReason.DATA_AFTER_ZEROS and not end.reason.is_clean
    assert end.offset == rec["commitlogOffset"] and end.file_offset == rec["fileOffset"]
    after = [t for t in msgs if t["file"] == rec["file"] and t["fileOffset"] > rec["fileOffset"]]
    assert end.records_after == len(after)
    blank = next(t for t in truth_records(version) if t["kind"] == "BLANK" and t["file"] == rec["file"])
    later = sum(262144 for t in {m["file"] for m in msgs} if t > rec["file"])
    assert end.bytes_after == blank["fileOffset"] + 8 - rec["fileOffset"] + later
    assert "data follow" in str(end)


def test_zero_tail_is_still_a_clean_end(version):
    from conftest import store_path
    offsets, end = _both(store_path(version))
    assert end.reason is EndReason.ZERO_TAIL and end.bytes_after == 0 and end.records_after == 0

"""Consume queue extensions: ext addresses, units, end markers; Kaitai, construct and API agree; bad input.

The vector stores run without ``enableConsumeQueueExt``, so the files here
are built through the construct schema with the broker's placement rules.
"""

from __future__ import annotations

import os
import struct

import pytest

from rmqformats import synth
from rmqformats.consumequeue import ConsumeQueue
from rmqformats.consumequeue_ext import (
    MAX_ADDR, MAX_REAL_OFFSET, MIN_EXT_UNIT_SIZE, ConsumeQueueExt, ExtUnit, ext_address, ext_offset,
    is_ext_address)
from rmqformats.errors import ExtUnitError, ExtUnitNotFoundError
from rmqformats.generated.construct import rocketmq_consumequeue_ext as cs_ext
from rmqformats.generated.kaitai.rocketmq_consumequeue_ext import RocketmqConsumequeueExt
from rmqformats.generated.layouts import rocketmq_consumequeue_ext as layout
from rmqformats.synth.queues import ExtUnitSpec, encode_ext_end_marker, write_consumequeue_ext

FILE_SIZE = 128
JAVA_LONG_MIN = -(1 << 63)
JAVA_INT_MIN = -(1 << 31)
SIZE_FIELD = struct.Struct(layout.UNIT_RUNS[0][1])
BODY_FIELDS = struct.Struct(layout.UNIT_BODY_RUNS[0][1])

#: Units of 20, 28, 20, 60 and 28 bytes in 128-byte files: the fourth does not fit
#: in the first file (128 - 68 - 4 = 56 < 60) and starts the second.
SPECS = [
    ExtUnitSpec(1984402762, 1795254822882, b""),
    ExtUnitSpec(-5, 1795254822883, bytes(range(8))),
    ExtUnitSpec(0, 1795254822884, b""),
    ExtUnitSpec(JAVA_INT_MIN, 1795254822885, b"\xff" * 40),
    ExtUnitSpec(2**31 - 1, 1795254822886, b"\x01\x80" * 4),
]


def _java_long(value: int) -> int:
    """``value`` wrapped to a Java long, as 64-bit two's complement arithmetic gives it."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


@pytest.fixture
def ext(tmp_path):
    folder = tmp_path / "consumequeue_ext" / "TopicExt" / "0"
    addresses = write_consumequeue_ext(folder, SPECS, file_size=FILE_SIZE)
    return folder, addresses


def test_units_round_trip_with_end_marker_and_zero_tail(ext):
    folder, addresses = ext
    names = sorted(os.listdir(folder))
    assert names == ["00000000000000000000", "00000000000000000128"]
    q = ConsumeQueueExt(folder)
    units = list(q)
    assert [(u.tags_code, u.msg_store_time, u.filter_bitmap) for u in units] == [tuple(s) for s in SPECS]
    assert [u.size for u in units] == [MIN_EXT_UNIT_SIZE + len(s.filter_bitmap) for s in SPECS] == [20, 28, 20, 60, 28]
    # The fourth unit moved to the second file; the first file ends with the -1 marker, then zeros.
    assert [u.ext_offset for u in units] == [0, 20, 48, 128, 188]
    first = (folder / names[0]).read_bytes()
    assert len(first) == FILE_SIZE
    assert first[68:70] == encode_ext_end_marker() == b"\xff\xff"
    assert first[70:] == bytes(FILE_SIZE - 70)
    second = (folder / names[1]).read_bytes()
    assert second[88:] == bytes(FILE_SIZE - 88)
    # The addresses are what the broker stores in the consume queue, and lead back to each unit.
    assert addresses == [u.address for u in units] == [o + JAVA_LONG_MIN for o in (0, 20, 48, 128, 188)]
    assert [q.get(a) for a in addresses] == units
    assert [q.get(u.ext_offset) for u in units] == units
    assert (q.min_offset, q.max_offset) == (0, 216)


def test_kaitai_construct_and_api_agree(ext):
    folder, _ = ext
    api = list(ConsumeQueueExt(folder))
    kaitai_units, construct_units = [], []
    for name in sorted(os.listdir(folder)):
        start, data = int(name), (folder / name).read_bytes()
        ks = RocketmqConsumequeueExt.from_bytes(data).units
        cs = cs_ext.rocketmq_consumequeue_ext.parse(data)["units"]
        assert not ks[-1].is_unit and not cs[-1]["is_unit"]
        assert ks[-1].is_end_marker == cs[-1]["is_end_marker"] == (name == "00000000000000000000")
        pos = start
        for k, c in zip(ks[:-1], cs[:-1]):
            kaitai_units.append(ExtUnit(pos, k.len_unit, k.body.tags_code, k.body.msg_store_time,
                                        k.body.filter_bit_map))
            construct_units.append(ExtUnit(pos, c["len_unit"], c["body"]["tags_code"],
                                           c["body"]["msg_store_time"], c["body"]["filter_bit_map"]))
            assert k.body.len_unit_computed == c["body"]["len_unit_computed"] == k.len_unit
            pos += k.len_unit
    assert kaitai_units == construct_units == api


def test_head_files_deleted(tmp_path):
    folder = tmp_path / "q"
    addresses = write_consumequeue_ext(folder, SPECS, file_size=FILE_SIZE, first_file=3)
    q = ConsumeQueueExt(folder)
    assert q.min_offset == 3 * FILE_SIZE
    assert [u.ext_offset for u in q] == [3 * FILE_SIZE + o for o in (0, 20, 48, 128, 188)]
    assert [q.get(a).tags_code for a in addresses] == [s.tags_code for s in SPECS]
    with pytest.raises(ExtUnitNotFoundError, match="in no file"):
        q.get(ext_address(0))


# -- ext addresses -----------------------------------------------------------------------


def test_address_encoding_boundaries():
    assert MAX_ADDR == JAVA_INT_MIN - 1 == -2147483649
    assert is_ext_address(MAX_ADDR) and is_ext_address(JAVA_LONG_MIN)
    assert not is_ext_address(MAX_ADDR + 1)
    # Tags hashes are sign-extended ints; delivery times are positive; neither is an address.
    for code in (JAVA_INT_MIN, -1, 0, 2**31 - 1, 1795254822882 + 10_000):
        assert not is_ext_address(code)
        with pytest.raises(ValueError):
            ext_offset(code)
    for offset in (0, 1, 48 << 20, MAX_REAL_OFFSET):
        address = _java_long(offset + JAVA_LONG_MIN)  # ConsumeQueueExt.decorate
        assert address == ext_address(offset) and is_ext_address(address)
        assert ext_offset(address) == _java_long(address - JAVA_LONG_MIN) == offset  # unDecorate
    assert ext_address(MAX_REAL_OFFSET) == MAX_ADDR
    with pytest.raises(ValueError):
        ext_address(MAX_REAL_OFFSET + 1)
    with pytest.raises(ValueError):
        ext_address(-1)


def test_consume_queue_unit_with_ext_address(tmp_path, ext):
    """A consume-queue unit whose tagsCode is an ext address leads to the extension unit."""
    folder, _ = ext
    q = ConsumeQueueExt(folder)
    target = list(q)[3]
    address = _java_long(target.ext_offset + JAVA_LONG_MIN)  # what the broker stores
    cq_folder = tmp_path / "consumequeue" / "TopicExt" / "0"
    synth.write_consume_queue(cq_folder, [(1000, 252, address), (1252, 252, 1984402762)], file_units=8)
    cq = ConsumeQueue(str(cq_folder), "TopicExt", 0)
    first, second = list(cq.units())
    assert first.tags_code == address and first.is_ext_address and is_ext_address(first.tags_code)
    assert not second.is_ext_address and not is_ext_address(second.tags_code)
    assert ext_offset(first.tags_code) == target.ext_offset
    assert q.get(first.tags_code) == target
    assert q.get(first.tags_code).tags_code == JAVA_INT_MIN


# -- bad input ---------------------------------------------------------------------------


def _patch(path, pos: int, data: bytes) -> None:
    with open(path, "r+b") as f:
        f.seek(pos)
        f.write(data)


def _first_file(folder):
    return folder / "00000000000000000000"


@pytest.mark.parametrize("size, message", [
    (5, "below the 20-byte minimum"),
    (19, "below the 20-byte minimum"),
    (27, "bitmap length 8 does not match unit size 27"),
    (32767, "runs past the end of the file"),
])
def test_hostile_size(ext, size, message):
    folder, addresses = ext
    _patch(_first_file(folder), 20, SIZE_FIELD.pack(size))
    q = ConsumeQueueExt(folder)
    with pytest.raises(ExtUnitError, match=message) as exc:
        list(q)
    assert (exc.value.path, exc.value.offset) == (str(_first_file(folder)), 20)
    assert "consumequeue_ext" not in str(exc.value) and "0/00000000000000000000 @ 0x14" in str(exc.value)
    with pytest.raises(ExtUnitError, match=message):
        q.get(addresses[1])
    assert q.get(addresses[0]).tags_code == SPECS[0].tags_code


def test_bitmap_length_mismatch_and_negative(ext):
    folder, addresses = ext
    body = BODY_FIELDS.pack(SPECS[1].tags_code, SPECS[1].msg_store_time, 4)
    _patch(_first_file(folder), 20 + SIZE_FIELD.size, body)
    with pytest.raises(ExtUnitError, match="bitmap length 4 does not match unit size 28") as exc:
        ConsumeQueueExt(folder).get(addresses[1])
    assert exc.value.offset == 20
    body = BODY_FIELDS.pack(SPECS[1].tags_code, SPECS[1].msg_store_time, -8)
    _patch(_first_file(folder), 20 + SIZE_FIELD.size, body)
    with pytest.raises(ExtUnitError, match="bitmap length -8"):
        list(ConsumeQueueExt(folder))


def test_truncated_file(ext):
    folder, addresses = ext
    with open(_first_file(folder), "r+b") as f:
        f.truncate(30)  # inside the second unit
    q = ConsumeQueueExt(folder)
    with pytest.raises(ExtUnitError, match="28-byte unit runs past the end of the file") as exc:
        list(q)
    assert exc.value.offset == 20
    with pytest.raises(ExtUnitError):
        q.get(addresses[1])
    with open(_first_file(folder), "r+b") as f:
        f.truncate(21)  # one byte of the size field left: the end of the file's data
    assert [u.ext_offset for u in ConsumeQueueExt(folder)] == [0, 128, 188]


def test_addresses_that_lead_nowhere(ext):
    folder, _ = ext
    q = ConsumeQueueExt(folder)
    with pytest.raises(ExtUnitNotFoundError, match="end-of-file marker") as exc:
        q.get(ext_address(68))
    assert exc.value.offset == 68
    with pytest.raises(ExtUnitNotFoundError, match="unwritten space"):
        q.get(ext_address(216))
    with pytest.raises(ExtUnitNotFoundError, match="in no file"):
        q.get(ext_address(2 * FILE_SIZE))
    with pytest.raises(ValueError):
        q.get(-5)  # neither an address nor an offset


def test_zero_filled_and_empty(tmp_path):
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / "00000000000000000000").write_bytes(bytes(FILE_SIZE))
    (folder / "00000000000000000128").write_bytes(b"")
    q = ConsumeQueueExt(folder)
    assert list(q) == [] and (q.min_offset, q.max_offset) == (0, 128)
    assert list(ConsumeQueueExt(tmp_path / "missing")) == []


def test_negative_size_ends_the_file(ext):
    """Recovery takes any size below 1 as the end of a file's data and goes on with the next file."""
    folder, addresses = ext
    _patch(_first_file(folder), 20, SIZE_FIELD.pack(-7))
    q = ConsumeQueueExt(folder)
    assert [u.ext_offset for u in q] == [0, 128, 188]
    with pytest.raises(ExtUnitNotFoundError, match="size -7, which readers take as the end") as exc:
        q.get(addresses[1])
    assert exc.value.offset == 20

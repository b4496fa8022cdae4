"""Message batches: the messages inside an inner-batch record's body.

The layout is ``formats/rocketmq_message_batch.ksy``; the reading order and
the checks follow ``MessageDecoder.decodeMessages``, which reads each item's
fields in order until the body ends and ignores the item size, magic and CRC.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from . import properties as props
from .errors import RecordSizeError
from .generated.layouts import rocketmq_message_batch as layout

assert layout.ITEM_SEQ == ("len_item", "magic", "body_crc", "flag", "len_body", "body",
                           "len_properties", "properties")
_HEAD = struct.Struct(layout.ITEM_RUNS[0][1])
_LEN_PROPS = struct.Struct(layout.ITEM_RUNS[1][1])


class InnerMessage(NamedTuple):
    """One message of a batch: what a consumer gets after unwrapping, minus the record's fields."""

    #: Position of the message in the batch (its queue offset is INNER_BASE plus this).
    index: int
    flag: int
    body: bytes
    properties_raw: str

    @property
    def properties(self) -> dict[str, str]:
        """The properties as a mapping."""
        return props.parse_properties(self.properties_raw)


def decode_batch(data: bytes, path: str | None = None, offset: int | None = None) -> list[InnerMessage]:
    """The messages of a batch body; raises :class:`RecordSizeError` naming ``path`` and ``offset``.

    ``path`` and ``offset`` locate the record that holds the batch; the error
    text adds the item index and its position in the body.
    """
    out: list[InnerMessage] = []
    pos, end = 0, len(data)
    while pos < end:
        at = pos
        try:
            _size, _magic, _crc, flag, len_body = _HEAD.unpack_from(data, pos)
            pos += _HEAD.size
            if len_body < 0 or pos + len_body > end:
                raise ValueError(f"body length {len_body}")
            body = data[pos:pos + len_body]
            pos += len_body
            (len_props,) = _LEN_PROPS.unpack_from(data, pos)
            pos += _LEN_PROPS.size
            if len_props < 0 or pos + len_props > end:
                raise ValueError(f"properties length {len_props}")
            text = data[pos:pos + len_props].decode("utf-8", "replace")
            pos += len_props
        except (struct.error, ValueError) as exc:
            reason = str(exc) if isinstance(exc, ValueError) else "item cut off by the end of the body"
            raise RecordSizeError(path, offset, f"inner batch item {len(out)} at body offset {at}: "
                                                f"{reason} ({end - at} bytes left)") from None
        out.append(InnerMessage(len(out), flag, body, text))
    return out

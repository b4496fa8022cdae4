"""Message objects made from the rows of the columnar walk: the object API is a view over the one record walk.

:class:`MessageWalk` is :class:`~rmqformats.walk.scan.ColumnarScan` with each block of rows the
kernel found handed on as :class:`~rmqformats.message.Message` objects instead of an Arrow batch: the
same records, the same end, BLANK records, checks (CRCs, the frontier record, ``DELAY``), errors and
live-store handling, because it is the same walk. :func:`~rmqformats.walk.record.decode_message`
reads one record with the same kernel (:meth:`rmqformats.commitlog.CommitLog.read`).

A message's fields are taken from the kernel's per-record matrices in one ``tolist`` per block; its
text fields are decoded as the broker's readers do (UTF-8, invalid bytes replaced) and its byte fields
copied out of the window, so no message holds a view of a window that is reused.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..message import Message
from . import arrow as A
from .record import messages
from .scan import ColumnarScan

#: Rows the kernel decodes per call for the object view: few, so that the first message comes at once
#: and a block of messages (each holding its body) stays small.
ROWS = 1024


class MessageWalk(ColumnarScan):
    """The columnar walk yielding lists of :class:`Message` objects (one list per block of rows)."""

    def _build(self, w: A.Window, rows: np.ndarray) -> Iterator[list[Message]]:  # type: ignore[override]
        yield messages(w, rows)

"""Telling a DLedger commit log from a plain one, and finding it under a store root."""

from __future__ import annotations

import glob
import os
import struct

from ..commitlog import SEGMENT_NAME, split_folders
from ..generated.layouts import rocketmq_dledger_data as layout
from ..queuefiles import queue_files

ENTRY_MAGIC = layout.ENTRY_MAGIC["normal"]
_FIRST = struct.Struct(layout.ENDIAN + "I")


def dledger_data_folder(root: str) -> str | None:
    """``<root>/dledger-<selfId>/data`` (the library's default data path) when it holds files, else ``None``.

    A broker runs one DLedger member, so there is one such folder; should
    there be several, the first by name is taken.
    """
    for folder in sorted(glob.glob(os.path.join(glob.escape(root), "dledger-*", "data"))):
        if queue_files(folder):
            return folder
    return None


def _first_file(path: str) -> str | None:
    for folder in split_folders(path):
        if os.path.isfile(folder):
            return folder
        files = queue_files(folder)
        if files:
            return files[0].path
    return None


def is_dledger(path: str) -> bool:
    """Whether the commit log at ``path`` (folders or a file) holds DLedger entries.

    A DLedger file starts with the entry magic 1 where a plain segment starts
    with a record's TOTALSIZE, which is never 1. A file that starts with
    zeros tells nothing; then the folder's place (``dledger-*/data``) decides.
    """
    first = _first_file(path)
    if first is None:
        return _named_like_dledger(path)
    with open(first, "rb") as f:
        head = f.read(4)
    if len(head) == 4 and _FIRST.unpack(head)[0] == ENTRY_MAGIC:
        return True
    if head.strip(b"\0"):
        return False
    return _named_like_dledger(os.path.dirname(first) if SEGMENT_NAME.match(os.path.basename(first)) else path)


def _named_like_dledger(path: str) -> bool:
    folder = os.path.normpath(split_folders(path)[0])
    return os.path.basename(folder) == "data" and os.path.basename(os.path.dirname(folder)).startswith("dledger-")

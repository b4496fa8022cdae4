"""Comparing decoded messages with RocketMQ's ground truth (``truth/messages.jsonl``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

#: Ground-truth keys that every parser must reproduce for every message record.
MESSAGE_KEYS = (
    "commitlogOffset", "magicCode", "storeSize", "bodyCRC", "queueId", "flag", "queueOffset",
    "physicalOffset", "sysFlag", "bornTimestamp", "bornHost", "bornPort", "storeTimestamp",
    "storeHost", "storePort", "reconsumeTimes", "preparedTransactionOffset", "topic", "properties",
    "propertiesString", "msgId", "uniqKey", "tags", "keys", "bodyRawBase64", "bodyLength",
)


#: Keys a parser reports where they apply: decompressed bodies, the DELAY level, inner batches.
OPTIONAL_KEYS = ("bodyDecompressedBase64", "delayTimeLevel", "innerMessages_MessageDecoder.decodeMessages")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def mismatches(actual: dict, truth: dict) -> list[str]:
    """Names and values of the fields where ``actual`` differs from the ``truth`` row."""
    out = []
    for key in MESSAGE_KEYS:
        if actual.get(key) != truth.get(key):
            out.append(f"{truth['commitlogOffset']}: {key}: {actual.get(key)!r} != {truth.get(key)!r}")
    for key in OPTIONAL_KEYS:
        if key in actual and actual[key] != truth.get(key):
            out.append(f"{truth['commitlogOffset']}: {key}: {actual[key]!r} != {truth.get(key)!r}")
        elif key in truth and key not in actual and key != "delayTimeLevel":
            out.append(f"{truth['commitlogOffset']}: {key} missing")
    return out


def count_mismatches(actual_rows: list[dict], truth_rows: list[dict]) -> tuple[int, list[str]]:
    """(number of mismatching fields, the first few as text); a length difference counts as one."""
    details: list[str] = []
    if len(actual_rows) != len(truth_rows):
        details.append(f"{len(actual_rows)} messages decoded, {len(truth_rows)} in the truth")
    for a, t in zip(actual_rows, truth_rows):
        details.extend(mismatches(a, t))
    return len(details), details[:20]


def summary_line(truth: Path, segment: str) -> str:
    """What the parser packages' programs print for the commit-log file ``segment``, from ``truth``
    (a ``messages.jsonl``): the message count, the first message's topic and queue offset, and the last
    one's topic, queue offset and store time."""
    rows = [json.loads(line) for line in truth.read_text(encoding="utf-8").splitlines()]
    msgs = [r for r in rows if r["file"] == segment and r["kind"] == "MESSAGE"]
    first, last = msgs[0], msgs[-1]
    return (f"{len(msgs)} {first['topic']} {first['queueOffset']} {last['topic']} {last['queueOffset']} "
            f"{last['storeTimestamp']}")

"""``rebuild --salvage``: a new store holding every intact message ``messages --salvage`` reads, past damage
too, written anew at new offsets as the broker appends them, on damaged copies of every vector store."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from rmqformats.cli import main, status

from conftest import store_path
from test_rebuild_damage import VERSIONS, damage

#: Properties the rewrite may change: the record CRC (over the new offsets) and an inner batch's base offset.
REWRITTEN = ("__CRC32#", "INNER_BASE")


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _read(capsys, *argv) -> list[dict]:
    code, out, _ = run(capsys, "messages", *argv, "--format", "jsonl")
    assert code in (status.OK, status.DAMAGED)
    return [json.loads(line) for line in out.splitlines()]


def _same_message(old: dict, new: dict) -> None:
    for name in ("topic", "queueId", "body", "bodyCRC", "flag", "sysFlag", "bornTimestamp", "storeTimestamp",
                 "bornHost", "storeHost", "reconsumeTimes"):
        assert new[name] == old[name], (name, old["commitLogOffset"], new["commitLogOffset"])
    strip = lambda p: {k: v for k, v in p.items() if k not in REWRITTEN}  # noqa: E731
    assert strip(new["properties"]) == strip(old["properties"])


def _salvage_and_compare(capsys, store, new) -> dict:
    """``rebuild --salvage`` of ``store`` into ``new``: every message of the salvage walk, in order, at the
    offsets the offset map gives; ``check`` consistent and ``preflight`` a clean start."""
    old = _read(capsys, store, "--salvage")
    code, text, err = run(capsys, "rebuild", store, "--out", new, "--salvage", "--json")
    assert code == status.OK, err
    doc = json.loads(text)
    assert doc["salvage"]["messages"] == doc["messages"] == len(old) and doc["lostMessages"] == 0
    got = _read(capsys, new)
    assert len(got) == len(old)
    with open(doc["salvage"]["offsetsFile"]) as f:
        mapping = [json.loads(line) for line in f]
    assert doc["salvage"]["offsetsFile"] == str(new / "salvage-offsets.jsonl")
    assert len(mapping) == len(old)
    next_qo: dict = {}
    moved = {m["oldOffset"]: m["newOffset"] for m in mapping}
    for o, n, m in zip(old, got, mapping):
        # A commit or rollback record points at its prepared record where that now lies.
        assert n["preparedTransactionOffset"] == moved.get(o["preparedTransactionOffset"],
                                                           o["preparedTransactionOffset"])
        _same_message(o, n)
        assert (m["oldOffset"], m["newOffset"]) == (o["commitLogOffset"], n["commitLogOffset"])
        assert (m["oldMsgId"], m["newMsgId"]) == (o["msgId"], n["msgId"])
        assert m["newQueueOffset"] == n["queueOffset"] and m["oldQueueOffset"] == o["queueOffset"]
        if n["sysFlag"] & 0b1100 in (0b0100, 0b1100):  # prepared, rolled back: no queue offset assigned
            continue
        key = (n["topic"], n["queueId"])
        if key in next_qo:  # each queue's offsets follow on without a hole
            assert n["queueOffset"] == next_qo[key], key
        next_qo[key] = n["queueOffset"] + int(n["properties"].get("INNER_NUM", 1))
    code, out, _ = run(capsys, "check", new)
    assert code == status.OK and out.rstrip().endswith("consistent"), out
    code, out, _ = run(capsys, "preflight", new, "--json")
    after = json.loads(out)
    assert code == status.OK, after["items"]
    assert after["lostMessages"] == 0
    # The body CRCs hold, and the data end of the new store is the end of every message.
    code, out, err = run(capsys, "messages", new, "--verify-crc", "--format", "jsonl")
    assert code == status.OK and len(out.splitlines()) == len(old), err
    return doc


def test_salvaged_store_holds_every_intact_message(capsys, tmp_path):
    """The 5.3.3 vector with the magic code of the record at commit-log offset 15340 zeroed: the 321 messages
    the salvage walk reads (60 before the damage, 261 past it) are in the new store, those past it 256 bytes
    earlier; the timer log is cut there and its checkpoint goes back so that the timer messages are enqueued
    again."""
    store = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), store)
    with open(store / "commitlog" / f"{0:020d}", "r+b") as f:
        f.seek(15340 + 4)
        f.write(bytes(4))
    new = tmp_path / "new"
    doc = _salvage_and_compare(capsys, store, new)
    sv = doc["salvage"]
    assert doc["messages"] == 321 and sv["oldDataEnd"] == 15340 and sv["firstChanged"] == 15596
    assert [r["commitLogOffset"] for r in sv["damagedRanges"]] == [15340]
    with open(new / "salvage-offsets.jsonl") as f:
        first_moved = json.loads(f.readlines()[60])
    assert (first_moved["oldOffset"], first_moved["newOffset"]) == (15596, 15340)
    assert first_moved["newMsgId"] == "7F00000100002A9F0000000000003BEC"
    assert doc["timerLog"]["cut"] == 0
    # The record CRC (__CRC32#, 5.2+) of each rewritten record is the broker's own over the new bytes, as
    # recovery with forceVerifyPropCRC checks it.
    code, out, err = run(capsys, "messages", new, "--verify-crc", "--force-verify-prop-crc", "--format", "jsonl")
    assert code == status.OK and len(out.splitlines()) == 321, err
    # Written as rebuild writes: a second writer is refused, and the old store is left as it was.
    code, _, err = run(capsys, "rebuild", store, "--out", new, "--salvage")
    assert code != status.OK and str(new) in err
    code, text, _ = run(capsys, "rebuild", store, "--out", tmp_path / "plain", "--json")
    assert json.loads(text)["lostMessages"] == 261  # the damaged store is unchanged
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".new")]


@pytest.mark.parametrize("kind", ["magic", "size", "torn", "zero"])
@pytest.mark.parametrize("version", VERSIONS)
def test_salvaged_store_after_damage(capsys, tmp_path, version, kind):
    store = tmp_path / "store"
    shutil.copytree(store_path(version), store)
    damage(store, version, kind)
    doc = _salvage_and_compare(capsys, store, tmp_path / "new")
    assert doc["salvage"]["damagedRanges"] and doc["salvage"]["moved"] > 0
    if version == "rocketmq-5.1.4" and kind == "zero":  # the transaction records move a segment back
        with open(tmp_path / "new" / "salvage-offsets.jsonl") as f:
            tx = [json.loads(line) for line in f if '"TopicTx"' in line]
        assert tx and all(m["newOffset"] < m["oldOffset"] for m in tx)


def test_salvage_of_an_intact_store_changes_nothing(capsys, tmp_path):
    """No damage: every record where it was, the commit-log bytes the same up to the data end."""
    new = tmp_path / "new"
    doc = _salvage_and_compare(capsys, store_path("rocketmq-5.1.4"), new)
    assert doc["salvage"]["moved"] == doc["salvage"]["requeued"] == 0 and doc["salvage"]["firstChanged"] is None
    old_dir = os.path.join(store_path("rocketmq-5.1.4"), "commitlog")
    for name in sorted(os.listdir(new / "commitlog")):
        with open(os.path.join(old_dir, name), "rb") as a, open(new / "commitlog" / name, "rb") as b:
            old, got = a.read(), b.read()
        end = doc["dataEnd"] - int(name)
        assert got[:max(end, 0)] == old[:max(end, 0)]


def test_salvage_refuses_what_it_cannot_do(capsys, tmp_path):
    """--only and --link do not apply to a commit log written anew: a usage error, nothing written."""
    store = store_path("rocketmq-5.3.3")
    for extra in (["--only", "queues"], ["--link"]):
        new = tmp_path / "new"
        code, _, err = run(capsys, "rebuild", store, "--out", new, "--salvage", *extra)
        assert code == status.ERROR and "salvage" in err and not new.exists(), err


@pytest.mark.parametrize("born, store_host", [("192.0.2.10", "127.0.0.1"), ("2001:db8::1", "127.0.0.1"),
                                              ("192.0.2.10", "2001:db8::2"), ("2001:db8::1", "2001:db8::2")])
@pytest.mark.parametrize("crc", [True, False])
def test_patched_record_is_the_built_one(born, store_host, crc):
    """The offsets packed into a record's fixed-width runs give the bytes the construct schema builds."""
    from rmqformats.generated.construct import rocketmq_commitlog as cs
    from rmqformats.rebuild.salvage import _patch, _rewrite
    from rmqformats.synth.commitlog import MessageSpec, encode_message
    spec = MessageSpec(topic="T" * 130 if crc else "T", body=b"body", properties={"KEYS": "a b", "TAGS": "t"},
                       born_host=(born, 1), store_host=(store_host, 2), queue_offset=7, sys_flag=0b1000,
                       prepared_transaction_offset=1234, crc32_property=crc)
    raw = encode_message(spec, 99999)
    got = _patch(raw, 512, 3, 77)
    assert got == _rewrite(cs.record.parse(raw), len(raw), 512, 3, 77)
    assert got == encode_message(MessageSpec(**{**spec.__dict__, "queue_offset": 3,
                                                "prepared_transaction_offset": 77}), 512)

"""The broker's own messages decoded (kinds, system properties, bodies) and ``pending``, on the vector stores."""

from __future__ import annotations

import base64
import json
import re
import shutil

import pyarrow as pa
import pytest

from rmqformats.cli import main, status
from rmqformats.store import open_store
from rmqformats.systopics import DECODE_COLUMNS, decode, parse_delay_levels
from rmqformats.systopics import bodies
from rmqformats.systopics.pending import pending

from conftest import FIXTURES, VERSIONS, store_path, truth_records
import docpages

#: The broker's default messageDelayLevel, written out here as the Java default string.
DEFAULT_LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"


def _decoded(version: str) -> dict[int, dict]:
    store = open_store(store_path(version))
    rows = {}
    for batch in store.commitlog.batches(columns=list(DECODE_COLUMNS) + ["commitLogOffset"]):
        d = decode(batch).to_pylist()
        for off, row in zip(batch.column("commitLogOffset").to_pylist(), d):
            rows[off] = row
    return rows


def _expected_kind(m: dict) -> str:
    """The kind, from the topic and properties of a truth record (TopicValidator, MixAll, MessageConst names)."""
    t, p = m["topic"], m["properties"]
    if t == "SCHEDULE_TOPIC_XXXX":
        return "scheduled"
    if t == "rmq_sys_wheel_timer":
        return "timerCancel" if "TIMER_DEL_UNIQKEY" in p else "timer"
    if t == "RMQ_SYS_TRANS_HALF_TOPIC":
        return "transactionHalf"
    if t == "RMQ_SYS_TRANS_OP_HALF_TOPIC":
        return "transactionOp"
    if t.startswith("%RETRY%"):
        return "retry"
    if t.startswith("%DLQ%"):
        return "deadLetter"
    if "%LMQ%" in p.get("INNER_MULTI_DISPATCH", ""):
        return "lmqDispatch"
    return "normal"


def _due_ms(value) -> int | None:
    """A due time as epoch ms, given as a datetime (Arrow columns) or as ms (the object API, JSON)."""
    return None if value is None or isinstance(value, int) else int(value.timestamp() * 1000)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_decoded_column_equals_the_truth_and_the_java_rules(version):
    _assert_truth(version, _decoded(version))


def _assert_truth(version: str, decoded: dict[int, dict]) -> None:
    """Each message's decoded system columns (by commit-log offset, under their column names) are what its
    truth record and the Java rules give."""
    levels = parse_delay_levels(DEFAULT_LEVELS)
    seen = set()
    truth = [m for m in truth_records(version) if m.get("kind") == "MESSAGE"]
    assert len(decoded) == len(truth)
    for m in truth:
        row, p = decoded[m["commitlogOffset"]], m["properties"]
        kind = _expected_kind(m)
        seen.add(kind)
        assert row["kind"] == kind, m["commitlogOffset"]
        carries = kind in ("scheduled", "timer", "timerCancel", "transactionHalf")
        assert row["realTopic"] == (p.get("REAL_TOPIC") if carries else None)
        assert row["realQueueId"] == (int(p["REAL_QID"]) if carries and "REAL_QID" in p else None)
        due = row["dueTime"] if isinstance(row["dueTime"], int) else _due_ms(row["dueTime"])
        if kind == "scheduled":
            level = int(p["DELAY"])
            assert row["delayLevel"] == level == m["queueId"] + 1  # queue id = level - 1
            assert due == m["storeTimestamp"] + levels[level - 1]
            # ScheduleMessageService's delivery time is what the broker dispatched as the tags code.
            assert due == m["dispatch"]["tagsCode"]
        elif kind in ("timer", "timerCancel"):
            assert due == int(p["TIMER_OUT_MS"])
        else:
            assert row["delayLevel"] is None and due is None
        assert row["timerCancelsKey"] == (p["TIMER_DEL_UNIQKEY"] if kind == "timerCancel" else None)
        tx_type = (m["sysFlag"] >> 2) & 3
        in_tx = kind == "transactionHalf" or tx_type != 0
        assert row["transactionState"] == ("half" if kind == "transactionHalf" else
                                           [None, "prepared", "commit", "rollback"][tx_type])
        assert row["transactionId"] == (p.get("__transactionId__", p.get("UNIQ_KEY")) if in_tx else None)
        assert row["producerGroup"] == (p.get("PGROUP") if in_tx else None)
        assert row["transactionCheckTimes"] == (int(p.get("TRANSACTION_CHECK_TIMES", 0))
                                                if kind == "transactionHalf" else None)
        eff = p.get("REAL_TOPIC") if carries and "REAL_TOPIC" in p else m["topic"]
        rd = eff.startswith(("%RETRY%", "%DLQ%"))
        assert row["group"] == (eff.split("%", 2)[2] if rd else None)
        assert row["originTopic"] == (p.get("DLQ_ORIGIN_TOPIC", p.get("RETRY_TOPIC")) if rd else None)
        assert row["originMsgId"] == (p.get("DLQ_ORIGIN_MESSAGE_ID", p.get("ORIGIN_MESSAGE_ID")) if rd else None)
        assert row["retryCount"] == (m["reconsumeTimes"] if rd else None)
    assert {"scheduled", "transactionHalf", "transactionOp", "retry", "deadLetter", "lmqDispatch"} <= seen
    if version == "rocketmq-5.3.3":
        assert {"timer", "timerCancel"} <= seen


@pytest.mark.parametrize("version", VERSIONS)
def test_the_object_api_gives_the_decoded_columns(version):
    """``Store.system_messages`` pairs each message with a ``SystemInfo``: the truth's values, and the same as
    the columns of the batch walk; ``decode_message`` gives one message's."""
    from rmqformats.systopics import SYSTEM_COLUMNS, SystemDecoding, SystemInfo, decode_message
    store = open_store(store_path(version))
    scan = store.system_messages()
    pairs = list(scan)
    assert scan.end is not None and scan.end.reason.is_clean
    assert all(isinstance(info, SystemInfo) for _, info in pairs)
    rows = {m.commitlog_offset: info.to_json_dict() for m, info in pairs}
    assert all(list(r) == list(SYSTEM_COLUMNS) for r in rows.values())
    _assert_truth(version, rows)
    columns = _decoded(version)
    assert rows == {o: {**r, "dueTime": _due_ms(r["dueTime"])} for o, r in columns.items()}
    # The typed fields: the due time as a datetime too, and the broker's delay levels honoured.
    m, info = next((m, i) for m, i in pairs if i.kind == "scheduled")
    assert info.due_time is not None and _due_ms(info.due_time) == info.due_timestamp
    assert info.real_topic == m.properties["REAL_TOPIC"] and info.delay_level == int(m.properties["DELAY"])
    slow = decode_message(m, decoding=SystemDecoding(delay_levels_ms=tuple(60_000 * (i + 1) for i in range(18))))
    assert slow.due_timestamp == m.store_timestamp + 60_000 * info.delay_level
    m, dlq = next((m, i) for m, i in pairs if i.kind == "deadLetter")
    assert (dlq.origin_topic, dlq.group, dlq.retry_count) == (
        m.properties.get("DLQ_ORIGIN_TOPIC", m.properties.get("RETRY_TOPIC")), m.topic[len("%DLQ%"):],
        m.reconsume_times)
    assert next(i for _, i in pairs if i.kind == "normal") == SystemInfo("normal", *[None] * 14)


def test_a_due_time_past_the_year_9999_stays_a_number():
    from rmqformats.systopics import decode_messages
    store = open_store(store_path("rocketmq-5.3.3"))
    timer = next(m for m in store.commitlog.scan() if m.topic == "rmq_sys_wheel_timer")
    far = "999999999999999999"  # 18 digits: a whole number Long.parseLong reads, ~31 million years ahead
    hostile = timer._replace(properties_raw=re.sub("TIMER_OUT_MS\x01[^\x02]*", f"TIMER_OUT_MS\x01{far}",
                                                   timer.properties_raw))
    assert hostile.properties["TIMER_OUT_MS"] == far
    info, = decode_messages([hostile])
    assert info.kind == "timer" and info.due_timestamp == int(far) and info.due_time is None
    assert info.to_json_dict()["dueTime"] == int(far)


def test_decoding_the_system_columns_does_not_import_pandas():
    """``SELECT *`` and the ``--decode-system`` walk stay lean: the decoder gives pyarrow.compute Arrow
    constants, not Python literals (whose first use makes pyarrow import pandas)."""
    import subprocess
    import sys
    code = ("import sys, rmqformats; from rmqformats.systopics import system_batches; "
            "from rmqformats.systopics.batches import NEEDED; s = rmqformats.open_store(sys.argv[1]); "
            "t = s.sql('SELECT * FROM messages').read_all(); "
            "n = sum(b.num_rows for b in system_batches(s.commitlog.batches(list(NEEDED)), ['topic'])); "
            "print(t.num_rows == n, sorted(set(t.column('kind').to_pylist())), 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(store_path("rocketmq-5.3.3"))], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out.endswith("False") and out.startswith("True") and "'timerCancel'" in out, out


def test_timer_due_times_are_the_timer_logs_delivery_times():
    """Each non-rolled timer-log unit's delayed time (TimerLog, read by the 5.3.3 classes) is the decoded due time."""
    decoded = _decoded("rocketmq-5.3.3")
    timer = json.loads((FIXTURES / "rocketmq-5.3.3" / "truth" / "timer.json").read_text())
    units = [u for u in timer["timerLogUnits"] if u["kind"] == "UNIT" and not u["magicRoll"]]
    assert len(units) == 8
    for u in units:
        row = decoded[u["offsetPy"]]
        assert int(row["dueTime"].timestamp() * 1000) == u["delayedTimeMs"]
        assert row["realTopic"] == u["msg_REAL_TOPIC"]


def test_delay_levels_parse_as_schedule_message_service():
    assert parse_delay_levels("1s 2m 3h 1d") == (1000, 120_000, 10_800_000, 86_400_000)
    for bad in ("", "1x", "s", "1.5s"):
        with pytest.raises(ValueError):
            parse_delay_levels(bad)


def test_a_delay_level_over_the_last_is_the_last():
    batch = pa.RecordBatch.from_pydict({
        "topic": ["SCHEDULE_TOPIC_XXXX"] * 3, "properties": [[("DELAY", "99")], [("DELAY", "x")], [("DELAY", "0")]],
        "storeTimestamp": pa.array([1000] * 3, pa.timestamp("ms", tz="UTC")), "sysFlag": [0] * 3,
        "reconsumeTimes": [0] * 3}, schema=pa.schema([
            ("topic", pa.string()), ("properties", pa.map_(pa.string(), pa.string())),
            ("storeTimestamp", pa.timestamp("ms", tz="UTC")), ("sysFlag", pa.int32()), ("reconsumeTimes", pa.int32())]))
    rows = decode(batch, delay_levels_ms=(10, 20)).to_pylist()
    assert int(rows[0]["dueTime"].timestamp() * 1000) == 1020
    assert rows[1]["dueTime"] is None and rows[1]["delayLevel"] is None  # not a number: not used
    assert rows[2]["dueTime"] is None


def test_system_topic_kinds_from_names():
    topics = ["rmq_sys_REVIVE_LOG_DefaultCluster", "rmq_sys_REVIVE_LOG_DefaultCluster", "RMQ_SYS_TRACE_TOPIC",
              "rmq_sys_TRACE_DATA_region", "MyTrace", "Parent", "RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC"]
    props = [[("TAGS", "ck")], [("TAGS", "bAck")], [], [], [], [("__LITE_TOPIC", "user-1")], []]
    batch = pa.RecordBatch.from_pydict({"topic": topics, "properties": props}, schema=pa.schema(
        [("topic", pa.string()), ("properties", pa.map_(pa.string(), pa.string()))]))
    from rmqformats.systopics import classify
    assert classify(batch, trace_topics=["MyTrace"]).to_pylist() == [
        "popCheckpoint", "popAck", "trace", "trace", "trace", "lite", "transactionHalf"]


# -- bodies --------------------------------------------------------------------------------

@pytest.mark.parametrize("version", VERSIONS)
def test_op_bodies_close_the_half_offsets_of_the_truth(version):
    truth = [m for m in truth_records(version) if m.get("topic") == "RMQ_SYS_TRANS_OP_HALF_TOPIC"]
    halves = [m for m in truth_records(version) if m.get("topic") == "RMQ_SYS_TRANS_HALF_TOPIC"]
    assert truth and halves
    closed = []
    for m in truth:
        assert m["properties"]["TAGS"] == "d"
        closed += [(m["queueId"], o) for o in bodies.op_offsets(base64.b64decode(m["bodyRawBase64"]))]
    assert sorted(closed) == sorted((m["queueId"], m["queueOffset"]) for m in halves)
    store = open_store(store_path(version))
    table = pa.concat_tables(bodies.op_offsets_table(b) for b in store.commitlog.batches(
        columns=["topic", "properties", "body", "queueId", "commitLogOffset"]))
    assert sorted(zip(table["opQueueId"].to_pylist(), table["halfQueueOffset"].to_pylist())) == sorted(closed)
    assert sorted(table["opCommitLogOffset"].to_pylist()) == sorted(m["commitlogOffset"] for m in truth)


def test_batched_op_bodies_and_bad_ones():
    assert bodies.op_offsets(b"3,7,12,") == [3, 7, 12]
    with pytest.raises(bodies.BodyFormatError, match="not a queue offset"):
        bodies.op_offsets(b"3,x")
    with pytest.raises(bodies.BodyFormatError, match="not ASCII"):
        bodies.op_offsets("\u00e9".encode())


def test_pop_checkpoint_and_ack_bodies():
    # The JSON fastjson writes for PopCheckPoint / AckMsg / BatchAckMsg (their @JSONField names, 5.3.3).
    ck = bodies.pop_checkpoint(json.dumps({"so": 10, "pt": 1000, "it": 30000, "bm": 1, "n": 3, "q": 2, "t": "T",
                                           "c": "G", "ro": 5, "d": [0, 1, 4], "bn": "broker-a"}).encode())
    assert ck.offsets == (10, 11, 14) and ck.revive_time == 31000 and ck.group == "G" and ck.broker_name == "broker-a"
    ack = bodies.pop_ack(json.dumps({"ao": 11, "so": 10, "c": "G", "t": "T", "q": 2, "pt": 1000}).encode())
    assert ack.ack_offsets == (11,) and not ack.batch
    back = bodies.pop_ack(json.dumps({"aol": [10, 14], "so": 10, "c": "G", "t": "T", "q": 2, "pt": 1000}).encode(),
                          tag="bAck")
    assert back.ack_offsets == (10, 14) and back.batch
    for bad, match in ((b"{", "not JSON"), (b"[]", "not a JSON object"), (b'{"so": "x"}', "not an integer"),
                       (b'{"so": 1, "pt": 1, "it": 1, "n": 1, "q": 0, "t": "T", "c": "G", "d": [1, "a"]}',
                        "not a list of integers")):
        with pytest.raises(bodies.BodyFormatError, match=match):
            bodies.pop_checkpoint(bad)


def test_trace_bodies():
    c, f = "\x01", "\x02"
    pub15 = c.join(["Pub", "1000", "DefaultRegion", "PG", "T", "MID", "TagA", "k1", "127.0.0.1:10911", "16", "3",
                    "0", "OFFID", "true", "10.0.0.1"])
    pub13 = c.join(["Pub", "1000", "DefaultRegion", "PG", "T", "MID", "TagA", "k1", "127.0.0.1:10911", "16", "3",
                    "0", "false"])
    sub = c.join(["SubAfter", "REQ", "MID", "5", "true", "k1", "0", "2000", "CG"])
    records = bodies.trace_records((pub15 + f + pub13 + f + sub + f).encode())
    assert [r.type for r in records] == ["Pub", "Pub", "SubAfter"]
    assert records[0].fields["offsetMsgId"] == "OFFID" and records[0].fields["clientHost"] == "10.0.0.1"
    assert records[1].fields["success"] == "false" and "offsetMsgId" not in records[1].fields
    assert records[2].fields == {"requestId": "REQ", "msgId": "MID", "costTime": "5", "success": "true", "keys": "k1",
                                 "contextCode": "0", "timeStamp": "2000", "groupName": "CG"}
    assert bodies.trace_records(c.join(["Odd", "a"]).encode())[0].fields == {"field1": "a"}


# -- pending -------------------------------------------------------------------------------

def _ms(value) -> int:
    return int(value.timestamp() * 1000)


def test_pending_on_the_533_vector_against_its_offsets_and_timer_checkpoint():
    store = open_store(store_path("rocketmq-5.3.3"))
    result = pending(store)
    truth = [m for m in truth_records("rocketmq-5.3.3") if m.get("kind") == "MESSAGE"]
    # No config/delayOffset.json: every level is delivered from offset 0, so every scheduled message waits;
    # the units of each SCHEDULE_TOPIC_XXXX consume queue are the messages listed for its level.
    assert not (store_path("rocketmq-5.3.3") / "config" / "delayOffset.json").exists()
    sched = result.scheduled.to_pylist()
    assert sorted(r["commitLogOffset"] for r in sched) == sorted(
        m["commitlogOffset"] for m in truth if m["topic"] == "SCHEDULE_TOPIC_XXXX")
    for level in {r["delayLevel"] for r in sched}:
        units = list(store.consume_queue("SCHEDULE_TOPIC_XXXX", level - 1).units())
        mine = {r["commitLogOffset"]: r for r in sched if r["delayLevel"] == level}
        assert sorted(u.commitlog_offset for u in units) == sorted(mine)
        for u in units:  # the queue offset listed, and the delivery time the unit holds as its tags code
            assert (mine[u.commitlog_offset]["queueOffset"], _ms(mine[u.commitlog_offset]["dueTime"])) == (
                u.cq_offset, u.tags_code)
    assert result.scheduled_by_level().to_pydict()["messages"] == [2, 1, 1]

    # Timers: config/timercheck read up to lastReadTimeMs; the timer-log units due after it are the waiting ones.
    timer = json.loads((FIXTURES / "rocketmq-5.3.3" / "truth" / "timer.json").read_text())
    cp = timer["timerCheckpoint"]
    assert result.timer_checkpoint == (cp["lastTimerQueueOffset"], cp["lastReadTimeMs"])
    waiting_units = {u["offsetPy"] for u in timer["timerLogUnits"]
                     if u["kind"] == "UNIT" and not u["magicDelete"] and u["msg_TIMER_OUT_MS"] is not None
                     and int(u["msg_TIMER_OUT_MS"]) > cp["lastReadTimeMs"]}
    rows = result.timers.to_pylist()
    assert {r["commitLogOffset"] for r in rows} == waiting_units
    assert len(rows) == 5
    deleted = next(u for u in timer["timerLogUnits"] if u.get("magicDelete"))
    cancelled = [r for r in rows if r["state"] == "cancelled"]
    named = next(m for m in truth if m["commitlogOffset"] == deleted["offsetPy"])["properties"]["TIMER_DEL_UNIQKEY"]
    assert [f"{r['realTopic']}+{r['uniqKey']}" for r in cancelled] == [named]
    # The three short timers were delivered: their copies are in TopicTimer.
    delivered = {m["uniqKey"] for m in truth if m["topic"] == "TopicTimer"}
    assert len(delivered) == 3 and not delivered & {r["uniqKey"] for r in rows}

    # Every half message is closed by an op (and the raw prepared records by their commit / rollback).
    assert result.transactions.num_rows == 0
    assert result.pop_checkpoints.num_rows == 0
    dlq = result.dead_letters.to_pylist()
    assert [(r["originTopic"], r["group"], r["messages"], r["maxRetryCount"]) for r in dlq] == [
        ("TopicTest", "GroupA", 1, 16)]
    assert result.last_store_time_ms == max(m["storeTimestamp"] for m in truth)


def test_pending_transactions_of_the_store_as_it_was_before_an_op_or_a_commit():
    store = open_store(store_path("rocketmq-5.3.3"))
    truth = {m["commitlogOffset"]: m for m in truth_records("rocketmq-5.3.3") if m.get("kind") == "MESSAGE"}
    ops = sorted(o for o, m in truth.items() if m["topic"] == "RMQ_SYS_TRANS_OP_HALF_TOPIC")
    # Before the second op: the second half message is open.
    result = pending(store, stop=ops[1])
    rows = result.transactions.to_pylist()
    assert len(rows) == 1
    half = truth[rows[0]["commitLogOffset"]]
    assert half["topic"] == "RMQ_SYS_TRANS_HALF_TOPIC" and half["queueOffset"] == 1 == rows[0]["halfQueueOffset"]
    assert rows[0]["transactionId"] == half["properties"]["UNIQ_KEY"] and rows[0]["realTopic"] == "TopicTx"
    assert rows[0]["checkTimes"] == 0 and rows[0]["producerGroup"] == "TxProducerGroup"
    assert rows[0]["ageMs"] == result.last_store_time_ms - half["storeTimestamp"]
    # Before the commit of the first raw prepared record: that record is open.
    commit = next(o for o, m in sorted(truth.items()) if (m["sysFlag"] >> 2) & 3 == 2)
    rows = pending(store, stop=commit).transactions.to_pylist()
    assert [r["commitLogOffset"] for r in rows] == [truth[commit]["preparedTransactionOffset"]]
    assert rows[0]["source"] == "prepared"


def test_pending_past_a_delay_offsets_file(tmp_path):
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root, ignore=shutil.ignore_patterns("timerwheel", "index"))
    (root / "config" / "delayOffset.json").write_text(json.dumps({"offsetTable": {"1": 1, "2": 1}}))
    result = pending(open_store(root))
    assert [(r["delayLevel"], r["queueOffset"], r["deliverFrom"]) for r in result.scheduled.to_pylist()] == [
        (1, 1, 1), (18, 0, 0)]


def test_pending_command(capsys, tmp_path):
    store = str(store_path("rocketmq-5.3.3"))
    assert main(["pending", store, "--format", "jsonl"]) == status.OK
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    counts = {}
    for r in out:
        counts[r["record"]] = counts.get(r["record"], 0) + 1
    assert counts == {"scheduled": 4, "timer": 5, "deadLetter": 1}
    first = out[0]
    assert first["dueTime"] == 1795377023514 and first["realTopic"] == "TopicDelay"
    # A messageDelayLevel from --config moves the due times.
    config = tmp_path / "broker.properties"
    config.write_text("messageDelayLevel=2s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h\n")
    assert main(["pending", store, "--format", "jsonl", "--config", str(config)]) == status.OK
    again = json.loads(capsys.readouterr().out.splitlines()[0])
    assert again["dueTime"] == 1795377024514
    assert main(["pending", store]) == status.OK
    text = capsys.readouterr().out
    assert "timer messages not yet delivered (past config/timercheck): 5" in text
    assert "open transactions (no op, commit or rollback closes them): 0" in text
    config.write_text("messageDelayLevel=1q\n")
    assert main(["pending", store, "--config", str(config)]) == status.ERROR
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "messageDelayLevel" in err


def test_the_readme_shows_pending_as_printed(capsys):
    readme = docpages.text()
    block = readme.split("$ rmqformats pending tests/fixtures/rocketmq-5.3.3/store\n", 1)[1].split("```", 1)[0]
    assert main(["pending", str(store_path("rocketmq-5.3.3"))]) == status.OK
    printed = capsys.readouterr().out.splitlines()
    assert [line for line in block.splitlines() if line] == [line for line in printed
                                                             if line and not line.startswith(" ")]


# -- a synthetic store (records built through the commit-log construct schema) ----------------

def _synthetic_store(tmp_path):
    from rmqformats.synth.commitlog import MessageSpec, write_commitlog
    revive = "rmq_sys_REVIVE_LOG_DefaultCluster"
    ck = lambda so, n, pt: json.dumps({"so": so, "pt": pt, "it": 60000, "bm": 0, "n": n, "q": 1, "t": "TopicPop",
                                       "c": "GroupPop", "ro": 0, "d": list(range(n)), "bn": "broker-a"}).encode()
    ack = lambda ao, so, pt: json.dumps({"ao": ao, "so": so, "c": "GroupPop", "t": "TopicPop", "q": 1,
                                         "pt": pt, "bn": "broker-a"}).encode()
    back = json.dumps({"aol": [11], "so": 10, "c": "GroupPop", "t": "TopicPop", "q": 1, "pt": 5000}).encode()
    pub = "\x01".join(["Pub", "1000", "DefaultRegion", "PG", "TopicTest", "MID", "TagA", "k1", "127.0.0.1:10911",
                       "16", "3", "0", "OFFID", "true", "10.0.0.1"]) + "\x02"
    half = lambda qo, key, checks: MessageSpec(
        "RMQ_SYS_TRANS_HALF_TOPIC", b"half", {"REAL_TOPIC": "TopicTx", "REAL_QID": "2", "PGROUP": "PG", "TAGS": "T",
                                               "TRAN_MSG": "true", "UNIQ_KEY": key,
                                               **({"TRANSACTION_CHECK_TIMES": str(checks),
                                                   "TRAN_PREPARED_QUEUE_OFFSET": "0"} if checks else {})},
        queue_offset=qo, store_timestamp=1_700_000_000_000 + qo * 1000)
    specs = [
        MessageSpec(revive, ck(10, 3, 5000), {"TAGS": "ck"}, queue_offset=0),
        MessageSpec(revive, ck(20, 1, 6000), {"TAGS": "ck"}, queue_offset=1),
        MessageSpec(revive, ack(10, 10, 5000), {"TAGS": "ack"}, queue_offset=2),
        MessageSpec(revive, back, {"TAGS": "bAck"}, queue_offset=3),
        MessageSpec(revive, ack(20, 20, 6000), {"TAGS": "ack"}, queue_offset=4),
        MessageSpec("RMQ_SYS_TRACE_TOPIC", pub.encode(), {"TAGS": "t"}),
        MessageSpec("MyTraceTopic", pub.encode(), {}),
        MessageSpec("Parent", b"lite", {"__LITE_TOPIC": "user-1"}),
        half(0, "TX-A", 0),
        half(1, "TX-B", 0),
        half(2, "TX-A", 3),  # the check put TX-A back with its check count
        MessageSpec("RMQ_SYS_TRANS_OP_HALF_TOPIC", b"1,", {"TAGS": "d"}),
        MessageSpec("RMQ_SYS_TRANS_HALF_TOPIC", b"half", {"REAL_TOPIC": "TopicTx", "REAL_QID": "0",
                                                          "UNIQ_KEY": "TX-C"}, queue_offset=3,
                    store_timestamp=1_700_000_009_000),
    ]
    root = tmp_path / "store"
    write_commitlog(root / "commitlog", specs, segment_size=1 << 16)
    return open_store(root)


def test_pending_finds_the_planted_unacked_checkpoint_and_open_transactions(tmp_path):
    store = _synthetic_store(tmp_path)
    result = pending(store, trace_topics=["MyTraceTopic"])
    pops = result.pop_checkpoints.to_pylist()
    assert [(r["topic"], r["group"], r["queueId"], r["startOffset"], r["unackedOffsets"]) for r in pops] == [
        ("TopicPop", "GroupPop", 1, 10, [12])]
    assert _ms(pops[0]["reviveTime"]) == 65000
    tx = result.transactions.to_pylist()
    assert [(r["transactionId"], r["halfQueueOffset"], r["checkTimes"], r["realQueueId"]) for r in tx] == [
        ("TX-A", 2, 3, 2), ("TX-C", 3, 0, 0)]
    assert tx[0]["ageMs"] == 9000 and tx[1]["ageMs"] == 0 and tx[0]["producerGroup"] == "PG"
    kinds = []
    for batch in store.commitlog.batches(columns=list(DECODE_COLUMNS)):
        kinds += decode(batch, trace_topics=["MyTraceTopic"]).column("kind").to_pylist()
    assert kinds == ["popCheckpoint"] * 2 + ["popAck"] * 3 + ["trace", "trace", "lite"] + ["transactionHalf"] * 3 + [
        "transactionOp", "transactionHalf"]
    bodies_ = [b for batch in store.commitlog.batches(columns=["topic", "body"])
               for t, b in zip(batch.column("topic").to_pylist(), batch.column("body").to_pylist())
               if t == "RMQ_SYS_TRACE_TOPIC"]
    assert bodies.trace_records(bodies_[0])[0].fields["clientHost"] == "10.0.0.1"


def test_pending_reports_a_checkpoint_body_that_is_not_json(tmp_path, capsys):
    from rmqformats.synth.commitlog import MessageSpec, write_commitlog
    root = tmp_path / "store"
    placed = write_commitlog(root / "commitlog", [MessageSpec("rmq_sys_REVIVE_LOG_C", b"{oops", {"TAGS": "ck"})],
                             segment_size=1 << 16)
    result = pending(open_store(root))
    assert result.pop_checkpoints.num_rows == 0
    assert result.body_errors == [f"commit-log offset {placed[0].commitlog_offset}: POP checkpoint body is not JSON: "
                                  "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"]
    assert main(["pending", str(root), "--format", "jsonl"]) == status.OK
    err = capsys.readouterr().err
    assert err.startswith(f"rmqformats pending: {root / 'commitlog'}: body not decoded at commit-log offset 0: ")


def test_pending_timers_not_yet_read_into_the_timer_log(tmp_path):
    """A timercheck whose queue offset is behind: the messages from it on are pending, whatever their time."""
    from rmqformats.synth.timer import encode_timer_check
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root, ignore=shutil.ignore_patterns("timerwheel", "index"))
    (root / "config" / "timercheck").write_bytes(encode_timer_check(
        last_read_time_ms=1 << 50, last_timer_log_flush_pos=0, last_timer_queue_offset=5, master_timer_queue_offset=5))
    rows = pending(open_store(root)).timers.to_pylist()
    # Offsets 5, 6 and 7; 8 is the cancellation, which names offset 3 (read and, at this time, delivered).
    assert [(r["queueOffset"], r["state"]) for r in rows] == [(5, "waiting"), (6, "waiting"), (7, "waiting")]


def test_pending_half_messages_the_check_has_passed(tmp_path):
    """Half messages under the CID_RMQ_SYS_TRANS offset of their queue were handled by the check."""
    store = _synthetic_store(tmp_path)
    (tmp_path / "store" / "config").mkdir()
    (tmp_path / "store" / "config" / "consumerOffset.json").write_text(json.dumps(
        {"offsetTable": {"RMQ_SYS_TRANS_HALF_TOPIC@CID_RMQ_SYS_TRANS": {"0": 3}}}))
    rows = pending(open_store(tmp_path / "store")).transactions.to_pylist()
    assert store is not None and [r["transactionId"] for r in rows] == ["TX-C"]


@pytest.mark.parametrize("version", VERSIONS)
def test_pending_on_every_vector(version):
    truth = [m for m in truth_records(version) if m.get("kind") == "MESSAGE"]
    result = pending(open_store(store_path(version)))
    # Scheduled messages at or past their level's offset in delayOffset.json (from 0 without it), due as the
    # broker dispatched them.
    path = store_path(version) / "config" / "delayOffset.json"
    assert result.has_delay_offsets == path.exists()
    # fastjson writes the level keys unquoted ({1:2,2:1}), so the pairs are read as text here.
    table = {k: int(v) for k, v in re.findall(r"(\d+):(\d+)", path.read_text())} if path.exists() else {}
    expected = {m["commitlogOffset"]: m["dispatch"]["tagsCode"] for m in truth if m["topic"] == "SCHEDULE_TOPIC_XXXX"
                and m["queueOffset"] >= table.get(str(m["queueId"] + 1), 0)}
    assert expected
    assert {r["commitLogOffset"]: _ms(r["dueTime"]) for r in result.scheduled.to_pylist()} == expected
    assert result.transactions.num_rows == 0  # every half message has its op
    dlq = [m for m in truth if m["topic"].startswith("%DLQ%")]
    assert result.dead_letters.to_pydict()["messages"] == [len(dlq)]
    assert result.dead_letters.to_pydict()["originTopic"] == [dlq[0]["properties"]["RETRY_TOPIC"]]
    if version != "rocketmq-5.3.3":
        assert result.timer_checkpoint is None and result.timers.num_rows == 0


def test_a_rolled_timer_message_is_listed_once_at_its_latest_copy(tmp_path):
    """TimerMessageStore.convertMessage puts a message past the roll window back into rmq_sys_wheel_timer with
    TIMER_ROLL_TIMES, keeping its UNIQ_KEY: the latest copy stands for it."""
    from rmqformats.synth.commitlog import MessageSpec, write_commitlog
    props = {"REAL_TOPIC": "T", "REAL_QID": "0", "TIMER_OUT_MS": "9000000000000", "UNIQ_KEY": "K"}
    root = tmp_path / "store"
    write_commitlog(root / "commitlog", [MessageSpec("rmq_sys_wheel_timer", b"x", props, queue_offset=0),
                                         MessageSpec("rmq_sys_wheel_timer", b"x", {**props, "TIMER_ROLL_TIMES": "1"},
                                                     queue_offset=1)], segment_size=1 << 16)
    rows = pending(open_store(root)).timers.to_pylist()
    assert [(r["queueOffset"], r["uniqKey"], _ms(r["dueTime"])) for r in rows] == [(1, "K", 9000000000000)]


# -- the decoded system columns in every output ----------------------------------------------------

def _plain(row: dict) -> dict:
    """A decoded row with its time as epoch milliseconds (as JSON Lines writes it)."""
    return {k: (round(v.timestamp() * 1000) if hasattr(v, "timestamp") else v) for k, v in row.items()}


def _csv_cell(name: str, value) -> str:
    """A value as the CSV export writes it (times as 2026-11-22 19:50:23.514Z, null empty)."""
    import datetime as dt
    if value is None:
        return ""
    if name == "dueTime":
        return dt.datetime.fromtimestamp(value / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"
    return str(value)


@pytest.mark.parametrize("version", VERSIONS)
def test_decoded_columns_in_export_messages_and_sql(version, tmp_path, capsys):
    """--decode-system gives the same columns, with the same values and types, in Parquet, JSON Lines and
    CSV exports, ``messages --format jsonl`` (columnar and per message) and ``sql``: the values of
    :func:`decode`, which the test above holds to the truth files and the Java rules."""
    import csv

    import pyarrow.dataset as ds

    from rmqformats.systopics import DECODED_SCHEMA, SYSTEM_COLUMNS
    store = str(store_path(version))
    want = {off: _plain(row) for off, row in _decoded(version).items()}
    truth = {m["commitlogOffset"]: m for m in truth_records(version) if m.get("kind") == "MESSAGE"}
    kinds = {_expected_kind(m) for m in truth.values()}
    assert {"scheduled", "transactionHalf", "retry", "deadLetter"} <= kinds
    if version == "rocketmq-5.3.3":
        assert {"timer", "timerCancel"} <= kinds

    assert main(["export", store, "--decode-system", "--to", "parquet", str(tmp_path / "pq")]) == status.OK
    table = ds.dataset(str(tmp_path / "pq")).to_table()
    for f in DECODED_SCHEMA:
        assert table.schema.field(f.name).type == f.type, f.name
    assert table.schema.names[-len(SYSTEM_COLUMNS):] == list(SYSTEM_COLUMNS)
    got = {r["commitLogOffset"]: _plain({c: r[c] for c in SYSTEM_COLUMNS}) for r in table.to_pylist()}
    assert got == want
    for off, m in truth.items():  # straight from the truth files as well
        assert got[off]["kind"] == _expected_kind(m)
        if got[off]["kind"] in ("timer", "timerCancel"):
            assert got[off]["dueTime"] == int(m["properties"]["TIMER_OUT_MS"])
            assert got[off]["realTopic"] == m["properties"]["REAL_TOPIC"]
        if got[off]["kind"] == "scheduled":  # the delivery time the broker dispatched as the tags code
            assert got[off]["dueTime"] == m["dispatch"]["tagsCode"]
            assert got[off]["realTopic"] == m["properties"]["REAL_TOPIC"]
        if got[off]["kind"] == "transactionHalf":
            assert got[off]["transactionId"] == m["properties"].get("__transactionId__",
                                                                     m["properties"].get("UNIQ_KEY"))

    assert main(["export", store, "--decode-system", "--to", "jsonl", str(tmp_path / "m.jsonl")]) == status.OK
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    assert main(["messages", store, "--decode-system", "--format", "jsonl"]) == status.OK
    assert capsys.readouterr().out.splitlines() == lines
    rows = [json.loads(line) for line in lines]
    assert len(rows) == len(truth)
    for r in rows:
        assert list(r)[-len(SYSTEM_COLUMNS):] == list(SYSTEM_COLUMNS)
        assert {c: r[c] for c in SYSTEM_COLUMNS} == want[r["commitLogOffset"]]
    # One message read by offset (the object API) has the line the walk gives.
    for r in rows:
        if r["kind"] != "normal":
            assert main(["messages", store, "--decode-system", "--format", "jsonl",
                         "--offset", str(r["commitLogOffset"])]) == status.OK
            assert json.loads(capsys.readouterr().out) == r

    assert main(["export", store, "--decode-system", "--columns", "commitLogOffset", "--to", "csv",
                 str(tmp_path / "m.csv")]) == status.OK
    with open(tmp_path / "m.csv", newline="") as f:
        read = list(csv.DictReader(f))
        assert len(read) == len(truth) and list(read[0]) == ["commitLogOffset", *SYSTEM_COLUMNS]
        for r in read:
            expected = want[int(r["commitLogOffset"])]
            assert {c: r[c] for c in SYSTEM_COLUMNS} == {c: _csv_cell(c, expected[c]) for c in SYSTEM_COLUMNS}

    pytest.importorskip("duckdb")
    result = open_store(store_path(version)).sql(
        f"SELECT commitLogOffset, {', '.join(chr(34) + c + chr(34) for c in SYSTEM_COLUMNS)}, storeTimestamp "
        "FROM messages")
    answer = result.read_all()
    for f in DECODED_SCHEMA:  # DuckDB's times are microseconds, as storeTimestamp's
        t = answer.schema.field("storeTimestamp").type if pa.types.is_timestamp(f.type) else f.type
        assert answer.schema.field(f.name).type == t, f.name
    answer = answer.drop_columns(["storeTimestamp"])
    assert {r.pop("commitLogOffset"): _plain(r) for r in answer.to_pylist()} == want


def test_decode_system_takes_the_brokers_delay_levels(tmp_path, capsys):
    store = str(store_path("rocketmq-5.3.3"))
    config = tmp_path / "broker.properties"
    config.write_text("messageDelayLevel=2s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h\n")
    assert main(["messages", store, "--decode-system", "--config", str(config), "--format", "jsonl",
                 "--topic", "SCHEDULE_TOPIC_XXXX", "--columns", "commitLogOffset,storeTimestamp,properties"]) \
        == status.OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows and all(r["kind"] == "scheduled" for r in rows)
    levels = parse_delay_levels(config.read_text().split("=", 1)[1])
    for r in rows:
        assert list(r)[:3] == ["commitLogOffset", "storeTimestamp", "properties"]
        assert r["dueTime"] == r["storeTimestamp"] + levels[int(r["properties"]["DELAY"]) - 1]
    # The table shows the kind, the real topic and the due time.
    assert main(["messages", store, "--decode-system", "--topic", "SCHEDULE_TOPIC_XXXX", "--limit", "1"]) == status.OK
    header, first = capsys.readouterr().out.splitlines()[:2]
    assert header.split()[-3:] == ["kind", "realTopic", "dueTime"]
    assert first.split()[-3:] == ["scheduled", "TopicDelay", "2026-11-22T19:50:23.514Z"]
    # With --columns (the walk reads the columns the decoding needs, and shows only those asked for).
    assert main(["messages", store, "--decode-system", "--columns", "topic,tags", "--topic",
                 "RMQ_SYS_TRANS_HALF_TOPIC"]) == status.OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["topic", "tags", "kind", "realTopic", "dueTime"]
    assert [line.split() for line in lines[1:]] == [["RMQ_SYS_TRANS_HALF_TOPIC", "TxFlow", "transactionHalf",
                                                      "TopicTx"]] * 2
    # --config and --trace-topic mean nothing without --decode-system.
    assert main(["export", store, "--config", str(config), "--to", "jsonl", str(tmp_path / "x.jsonl")]) \
        == status.ERROR
    assert "--decode-system" in capsys.readouterr().err


def test_the_stores_broker_properties_give_the_delay_levels(tmp_path, capsys):
    """Without --config, the messageDelayLevel of the store's config/broker.properties decodes the due times of
    messages --decode-system, export, sql and pending (Python and command); --config wins over it."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root, ignore=shutil.ignore_patterns("timerwheel", "index"))
    levels = "3s 6s 9s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
    (root / "config" / "broker.properties").write_text(f"messageDelayLevel={levels}\n")
    delays = parse_delay_levels(levels)
    truth = {m["commitlogOffset"]: m for m in truth_records("rocketmq-5.3.3") if m.get("kind") == "MESSAGE"}
    want = {o: m["storeTimestamp"] + delays[int(m["properties"]["DELAY"]) - 1] for o, m in truth.items()
            if m["topic"] == "SCHEDULE_TOPIC_XXXX"}
    assert len(want) == 4
    assert {r["commitLogOffset"]: _ms(r["dueTime"]) for r in pending(open_store(root)).scheduled.to_pylist()} == want
    assert main(["pending", str(root), "--format", "jsonl"]) == status.OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["commitLogOffset"]: r["dueTime"] for r in rows if r["record"] == "scheduled"} == want
    assert main(["messages", str(root), "--decode-system", "--topic", "SCHEDULE_TOPIC_XXXX", "--format", "jsonl"]) \
        == status.OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["commitLogOffset"]: r["dueTime"] for r in rows} == want
    out = tmp_path / "scheduled.jsonl"
    assert main(["export", str(root), "--decode-system", "--topic", "SCHEDULE_TOPIC_XXXX", "--to", "jsonl",
                 str(out)]) == status.OK
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["commitLogOffset"]: r["dueTime"] for r in rows} == want
    capsys.readouterr()
    assert main(["sql", str(root), "SELECT commitLogOffset, epoch_ms(dueTime) AS due FROM messages "
                 "WHERE kind = 'scheduled'", "--format", "jsonl"]) == status.OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["commitLogOffset"]: r["due"] for r in rows} == want
    config = tmp_path / "given.properties"
    config.write_text("messageDelayLevel=1m\n")
    assert main(["pending", str(root), "--format", "jsonl", "--config", str(config)]) == status.OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["commitLogOffset"]: r["dueTime"] for r in rows if r["record"] == "scheduled"} == {
        o: truth[o]["storeTimestamp"] + 60_000 for o in want}


def test_pending_reads_the_54_rocksdb_transaction_and_timer_stores(tmp_path, capsys):
    """A 5.4 store (rocksdbstore/ built through the rocksdb_trans_* and rocksdb_timer_* specs): the halves whose
    ``trans`` record is there are the open transactions, with its check count; the others are closed though no op
    message names them. Timer messages pending: those the scan has not read, and those whose record
    is due at or after the timeline."""
    from rmqformats.synth.rocksdb import write_rocksdb_store
    t0 = 1_700_000_000_000
    info = write_rocksdb_store(str(tmp_path), timers=4, halves=4, open_halves=[1, 3], check_times={1: 2, 3: 5},
                               timer_scan_offset=3, timeline=t0 + 90_000)
    halves = info["offsets"]["RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC"]
    timers = info["offsets"]["rmq_sys_wheel_timer"]
    result = pending(open_store(tmp_path))
    assert result.rocksdb_transactions and result.rocksdb_timer_checkpoint == (3, t0 + 90_000)
    tx = result.transactions.to_pylist()
    assert [(r["transactionId"], r["source"], r["commitLogOffset"], r["halfQueueOffset"], r["checkTimes"],
             r["realTopic"], r["realQueueId"], r["ageMs"]) for r in tx] == [
        ("H0001", "rocksdb", halves[1][0], 1, 2, "TopicTest", 0, 2),
        ("H0003", "rocksdb", halves[3][0], 3, 5, "TopicTest", 0, 0)]
    # T0000 (due t0 + 60 s) was delivered; T0001, T0002 wait in timer records; T0003 was not scanned yet.
    rows = result.timers.to_pylist()
    assert [(r["uniqKey"], r["queueOffset"], r["commitLogOffset"], _ms(r["dueTime"])) for r in rows] == [
        (f"T{i:04d}", i, timers[i][0], t0 + 60_000 * (i + 1)) for i in (1, 2, 3)]
    assert main(["pending", str(tmp_path), "--format", "jsonl"]) == status.OK
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["record"], r.get("uniqKey") or r.get("transactionId")) for r in out] == [
        ("timer", "T0001"), ("timer", "T0002"), ("timer", "T0003"), ("transaction", "H0001"),
        ("transaction", "H0003")]
    assert main(["pending", str(tmp_path)]) == status.OK
    text = capsys.readouterr().out
    assert "RocksDB timer store: scanned to queue offset 3, delivered up to " in text
    assert "open transactions (no op, commit or rollback closes them): 2" in text
    # The report's pending section is made from the same rows.
    from rmqformats.recovery.report import build_report
    assert build_report(open_store(tmp_path)).pending.counts() == {
        "scheduled": 0, "timer": 3, "transaction": 2, "popCheckpoint": 0, "deadLetter": 0}

"""``rmqformats sql`` and ``rmqformats.sql.query`` on the vector stores, against the ground truth and the
other commands' answers; the pushdown of WHERE conditions into the walk; errors and outputs."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections import Counter
from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

pytest.importorskip("duckdb")

import rmqformats  # noqa: E402
from rmqformats import output  # noqa: E402
from rmqformats.cli import main  # noqa: E402
from rmqformats.sql import SqlError, explain, query  # noqa: E402

from conftest import store_path, truth_records  # noqa: E402
import docpages  # noqa: E402


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def cli_json(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, *argv)
    assert code in (0, 1), err
    return json.loads(out)


def sql_rows(capsys, store, text: str) -> list[dict]:
    code, out, err = run_cli(capsys, "sql", str(store), text, "--format", "jsonl")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_counts_and_bytes_per_topic_and_queue_equal_inspect_and_truth(version, capsys):
    store = store_path(version)
    rows = sql_rows(capsys, store, "SELECT topic, queueId, count(*) AS n, sum(storeSize) AS bytes "
                                   "FROM messages GROUP BY topic, queueId")
    truth = [t for t in truth_records(version) if t["kind"] == "MESSAGE"]
    counts = Counter((t["topic"], t["queueId"]) for t in truth)
    sizes = Counter()
    for t in truth:
        sizes[(t["topic"], t["queueId"])] += t["storeSize"]
    assert {(r["topic"], r["queueId"]): r["n"] for r in rows} == dict(counts)
    assert {(r["topic"], r["queueId"]): r["bytes"] for r in rows} == dict(sizes)
    inspected = cli_json(capsys, "inspect", str(store), "--format", "json")
    assert {(topic, int(q)): n for topic, t in inspected["topics"].items() for q, n in t["queues"].items()} \
        == dict(counts)
    per_topic = sql_rows(capsys, store, "SELECT topic, count(*) AS n FROM messages GROUP BY topic")
    assert {r["topic"]: r["n"] for r in per_topic} == {t: v["messages"] for t, v in inspected["topics"].items()}


def test_messages_join_queue_units_equals_check(version, capsys):
    store = store_path(version)
    checked = cli_json(capsys, "check", str(store), "--format", "json")
    assert not checked["problems"]
    (row,) = sql_rows(capsys, store, """
        SELECT (SELECT count(*) FROM queue_units) AS units,
               (SELECT count(DISTINCT (topic, queueId)) FROM queue_units) AS queues,
               (SELECT count(*) FROM messages m JOIN queue_units q
                  ON m.commitLogOffset = q.commitLogOffset AND m.topic = q.topic AND m.queueId = q.queueId)
                 AS dispatched""")
    assert row == {"units": checked["units"], "queues": checked["queues"],
                   "dispatched": checked["dispatchedMessages"]}


def test_consumer_offsets_equal_lag(version, capsys):
    store = store_path(version)
    code, out, err = run_cli(capsys, "lag", str(store), "--format", "jsonl")
    lag = [json.loads(line) for line in out.splitlines()]
    assert lag
    rows = sql_rows(capsys, store, "SELECT * FROM consumer_offsets ORDER BY \"group\", topic, queueId")
    assert rows == [{k: v for k, v in r.items() if k != "behindCommitLog"} for r in lag]
    (total,) = sql_rows(capsys, store, "SELECT sum(lag) AS lag FROM consumer_offsets WHERE topic = 'TopicTest'")
    assert total["lag"] == sum(r["lag"] for r in lag if r["topic"] == "TopicTest")


def test_config_index_and_timer_tables(version):
    store = rmqformats.open_store(store_path(version))
    topics = query(store, "SELECT topic, readQueueNums FROM topics").read_all().to_pylist()
    config = store.config().topics.topic_config_table
    assert {r["topic"]: r["readQueueNums"] for r in topics} == {k: v.read_queue_nums for k, v in config.items()}
    (entries,) = query(store, "SELECT count(*) AS n FROM index_entries").read_all().to_pylist()
    assert entries["n"] == store.index_to_arrow().num_rows
    (timer,) = query(store, "SELECT count(*) AS n FROM timer").read_all().to_pylist()
    timers = store.timer()
    assert timer["n"] == (sum(1 for _ in timers.units()) if timers.exists else 0)


def test_store_sql_facade():
    store = rmqformats.open_store(store_path("rocketmq-5.3.3"))
    table = store.sql("SELECT count(*) AS n FROM messages WHERE topic = 'TopicTest'").read_all()
    assert table.to_pylist() == [{"n": sum(1 for t in truth_records("rocketmq-5.3.3")
                                           if t["kind"] == "MESSAGE" and t["topic"] == "TopicTest")}]


def test_topic_filter_reaches_the_walk():
    store = rmqformats.open_store(store_path("rocketmq-5.3.3"))
    whole = query(store, "SELECT count(*) FROM messages")
    whole.read_all()
    one = query(store, "SELECT count(*) AS n FROM messages WHERE topic = 'TopicTest' AND queueId = 2")
    (row,) = one.read_all().to_pylist()
    walked = one.sources["messages"]
    assert walked.options["topic"] == ["TopicTest"] and walked.options["queue_id"] == 2
    assert walked.rows == row["n"] == 30
    assert walked.rows < whole.sources["messages"].rows == 322
    # Only the columns the query names are read: no body, so nothing is decompressed.
    assert walked.options["decompress"] is False
    units = query(store, "SELECT count(*) AS n FROM queue_units WHERE topic = 'TopicTest' AND queueId = 1")
    assert units.read_all().to_pylist() == [{"n": 30}]
    assert units.sources["queue_units"].options["topic"] == "TopicTest"
    assert units.sources["queue_units"].rows == 30


WHERES = [
    "topic = 'TopicTest'",
    "topic IN ('TopicTest', 'TopicBig') AND queueId = 0",
    "storeTimestamp >= TIMESTAMP '{mid}' AND storeTimestamp < TIMESTAMP '{late}'",
    "storeTimestamp <= TIMESTAMP '{mid}'",
    "storeTimestamp BETWEEN TIMESTAMP '{mid}' AND TIMESTAMP '{late}'",
    "commitLogOffset > 1000 AND commitLogOffset <= 262144",
    "commitLogOffset BETWEEN 0 AND 49340 AND TOPIC = 'TopicTest'",
    "m.topic = 'TopicTest' OR m.queueId = 1",
]


@pytest.mark.parametrize("where", WHERES)
def test_pushdown_keeps_results_exact(where):
    store = rmqformats.open_store(store_path("rocketmq-5.3.3"))
    times = sorted(t["storeTimestamp"] for t in truth_records("rocketmq-5.3.3") if t["kind"] == "MESSAGE")
    import datetime as dt

    def text(ms):
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    where = where.format(mid=text(times[len(times) // 2]), late=text(times[3 * len(times) // 4]))
    select = "SELECT commitLogOffset FROM messages m WHERE {} ORDER BY 1"
    pushed = query(store, select.format(where))
    got = pushed.read_all().column(0).to_pylist()
    # The same condition behind a subquery DuckDB sees whole: nothing reaches the walk.
    plain = query(store, f"SELECT commitLogOffset FROM (SELECT * FROM messages UNION ALL SELECT * FROM messages "
                         f"WHERE false) m WHERE {where} ORDER BY 1")
    assert got == plain.read_all().column(0).to_pylist()
    assert got
    if " OR " not in where:
        assert pushed.sources["messages"].options.keys() - {"decompress"}
        # Read: what the query keeps, and at most the rows of the millisecond a `<` bound was widened to.
        assert len(got) <= pushed.sources["messages"].rows < 322


def test_a_table_read_twice_is_walked_twice():
    store = rmqformats.open_store(store_path("rocketmq-5.3.3"))
    plan = explain("SELECT count(*) FROM messages a JOIN messages b USING (commitLogOffset) WHERE a.topic = 'x'")
    assert plan.tables == ["messages"] and "messages" not in plan.filters
    (row,) = query(store, "SELECT count(*) AS n FROM messages a JOIN messages b USING (commitLogOffset)"
                   ).read_all().to_pylist()
    assert row["n"] == 322


@pytest.mark.parametrize("text, position", [
    ("SELECT nope FROM messages", 7),
    ("SELECT * FROM messages WHERE", 23),
    ("SELECT *\nFROM nothing", 14),
    ("SELECT topic,\n  bogus(1) FROM messages", 16),
])
def test_query_error_is_one_line_naming_the_position_exit_2(capsys, text, position):
    code, out, err = run_cli(capsys, "sql", str(store_path("rocketmq-5.3.3")), text)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("rmqformats sql: error: ")
    assert f"query position {position} " in err
    line = text[:position].count("\n") + 1
    assert f"(line {line}, column {position - (text.rfind(chr(10), 0, position) + 1) + 1})" in err
    store = rmqformats.open_store(store_path("rocketmq-5.3.3"))
    with pytest.raises(SqlError) as caught:
        query(store, text).read_all()
    assert caught.value.position == position


@pytest.mark.parametrize("text, why", [
    ("SELECT count(*) FROM messages; SELECT 2", "one query at a time: this text holds 2 statements"),
    ("DELETE FROM messages", "only a query is run"),
    ("CREATE TABLE t AS SELECT 1", "only a query is run"),
])
def test_one_query_and_only_a_query(capsys, text, why):
    code, out, err = run_cli(capsys, "sql", str(store_path("rocketmq-5.3.3")), text)
    assert code == 2 and out == "" and err.count("\n") == 1 and why in err
    with pytest.raises(SqlError, match=why):
        query(rmqformats.open_store(store_path("rocketmq-5.3.3")), text).read_all()
    assert sql_rows(capsys, str(store_path("rocketmq-5.3.3")), "SELECT 1 AS one;") == [{"one": 1}]


def test_output_formats_and_atomic_exclusive_writes(tmp_path, capsys):
    store = str(store_path("rocketmq-5.3.3"))
    text = "SELECT topic, count(*) AS n, min(storeTimestamp) AS first FROM messages GROUP BY topic ORDER BY topic"
    expected = sql_rows(capsys, store, text)
    out = tmp_path / "r.parquet"
    code, _, err = run_cli(capsys, "sql", store, text, "--format", "parquet", "-o", str(out))
    assert code == 0, err
    table = pq.read_table(out)
    assert table.column("topic").to_pylist() == [r["topic"] for r in expected]
    assert table.column("n").to_pylist() == [r["n"] for r in expected]
    csv = tmp_path / "r.csv"
    assert run_cli(capsys, "sql", store, text, "--format", "csv", "-o", str(csv))[0] == 0
    assert pcsv.read_csv(csv).column("n").to_pylist() == [r["n"] for r in expected]
    # An existing target is refused without --force and kept as it was.
    before = csv.read_bytes()
    code, _, err = run_cli(capsys, "sql", store, "SELECT 1 AS x", "--format", "csv", "-o", str(csv))
    assert code == 2 and "exists" in err and err.count("\n") == 1
    assert csv.read_bytes() == before
    assert run_cli(capsys, "sql", store, "SELECT 1 AS x", "--format", "csv", "-o", str(csv), "--force")[0] == 0
    assert csv.read_text().splitlines() == ['"x"', "1"]
    # A second writer of the same target is refused while the first holds it.
    lock = output.TargetLock(str(tmp_path / "busy.jsonl"))
    try:
        code, _, err = run_cli(capsys, "sql", store, text, "--format", "jsonl", "-o", str(tmp_path / "busy.jsonl"))
    finally:
        lock.release()
    assert code == 2 and "busy" in err
    # A query that fails while running leaves nothing behind.
    failed = tmp_path / "failed.jsonl"
    code, _, err = run_cli(capsys, "sql", store, "SELECT 'x'::INT AS n FROM messages", "--format", "jsonl",
                           "-o", str(failed))
    assert code == 2 and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["r.csv", "r.parquet"]
    # Never into the store being read.
    code, _, err = run_cli(capsys, "sql", store, text, "--format", "csv", "-o", os.path.join(store, "r.csv"))
    assert code == 2 and "inside the store" in err and not os.path.exists(os.path.join(store, "r.csv"))


def test_table_output(capsys):
    code, out, err = run_cli(capsys, "sql", str(store_path("rocketmq-5.3.3")),
                             "SELECT topic, count(*) AS n, min(storeTimestamp) AS first FROM messages "
                             "WHERE topic = 'TopicTest' GROUP BY topic")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split() == ["topic", "n", "first"]
    first = min(t["storeTimestamp"] for t in truth_records("rocketmq-5.3.3")
                if t["kind"] == "MESSAGE" and t["topic"] == "TopicTest")
    import datetime as dt
    stamp = dt.datetime.fromtimestamp(first / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    assert row.split() == ["TopicTest", "120", stamp]


def _readme_sql_section() -> str:
    page = docpages.page("docs/guides/exports-sql.md")
    return page[page.index("## SQL: DuckDB over a store"):]


def test_the_readme_sql_commands_run(tmp_path, capsys, monkeypatch):
    section = _readme_sql_section()
    commands = [line for line in section.splitlines() if line.startswith("rmqformats sql --sample ")]
    assert len(commands) >= 5
    monkeypatch.chdir(tmp_path)
    for line in commands:
        code, out, err = run_cli(capsys, *shlex.split(line)[1:])
        assert code == 0, (line, err)
        assert out.count("\n") >= 2 or "-o" in line, (line, out)
    assert pq.read_table(tmp_path / "topics.parquet").num_rows == len(
        sql_rows(capsys, rmqformats.sample_store_path(), "SELECT DISTINCT topic FROM messages"))
    # The error line shown is the one printed.
    code, _, err = run_cli(capsys, "sql", str(store_path("rocketmq-5.3.3")), "SELECT nope FROM messages")
    assert code == 2 and err.strip() in section


def test_the_readme_sql_python_example_runs(capsys):
    section = _readme_sql_section()
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    exec(block.replace('"/data/rocketmq/store"', "rmqformats.sample_store_path()"), {"rmqformats": rmqformats})
    out = capsys.readouterr().out
    assert "'TopicTest'" in out and "'topic': ['TopicTest']" in out


def test_jobs_reach_the_walk():
    store = rmqformats.open_store(store_path("rocketmq-5.3.3"))
    text = "SELECT topic, count(*) AS n, sum(octet_length(body)) AS b FROM messages GROUP BY topic ORDER BY topic"
    one = query(store, text).read_all()
    two = query(store, text, jobs=2)
    assert two.read_all() == one
    options = two.sources["messages"].options
    assert options.get("jobs", options.get("threads")) == 2


def test_a_store_read_error_is_one_line_naming_the_file(tmp_path, capsys):
    import shutil
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.3.3"), root)
    topics = root / "config" / "topics.json"
    topics.write_text("{not json")
    code, out, err = run_cli(capsys, "sql", str(root), "SELECT count(*) FROM topics")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert str(topics) in err
    # A query not naming the table does not read it.
    code, out, err = run_cli(capsys, "sql", str(root), "SELECT count(*) AS n FROM consumer_offsets")
    assert code == 0, err


@pytest.mark.parametrize("text, tables, filters", [
    ("SELECT count(*) FROM messages WHERE topic = 'A' AND topic = 'B'", ["messages"], {"topic": []}),
    ("SELECT count(*) FROM MESSAGES WHERE storeTimestamp >= TIMESTAMPTZ '2026-11-23 03:50:22.38+08'",
     ["messages"], {"since": 1795377022380}),
    ("SELECT count(*) FROM messages WHERE storeTimestamp < '2026-11-22 19:50:22.3805'",
     ["messages"], {"until": 1795377022381}),
    ("SELECT count(*) FROM messages WHERE NOT (topic = 'A') AND (queueId = 1 OR queueId = 2)", ["messages"], {}),
    ("WITH messages AS (SELECT 1 AS topic) SELECT count(*) FROM messages WHERE topic = 1", [], {}),
    ("SELECT * FROM topics t WHERE EXISTS (SELECT 1 FROM messages WHERE topic = t.topic AND queueId = 3)",
     ["messages", "topics"], {"queue_id": 3}),
    ("SELECT * FROM queue_units q JOIN messages m USING (commitLogOffset) WHERE q.topic = 'A' "
     "AND m.commitLogOffset BETWEEN 10 AND 20", ["messages", "queue_units"], {"from_offset": 10, "to_offset": 21}),
])
def test_explain_finds_the_tables_and_the_conditions_the_walk_can_take(text, tables, filters):
    plan = explain(text)
    assert plan.tables == tables
    assert plan.filters.get("messages", {}) == filters


def test_duckdb_draws_no_progress_bar_on_standard_output():
    """A query longer than DuckDB's two seconds would draw its progress bar into the rows on standard output."""
    from rmqformats.sql import _connect
    con = _connect()
    assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False

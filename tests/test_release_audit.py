"""The release audit (formats/audit.yaml): every release claim in formats/ has a row that says where
it was established and what the release before it lacks, and every row has its claim."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from rmqformats.versions import audit
from rmqformats.versions import releases as rel

REPO = Path(__file__).resolve().parents[1]


def _fmt(claims) -> str:
    return "\n".join(f"  {c.at} {c.key} {c.release} (ref {c.ref})" for c in claims)


def test_every_claim_has_a_row_and_every_row_a_claim():
    result = audit.check()
    assert not result.missing, "claims without a row in formats/audit.yaml:\n" + _fmt(result.missing)
    assert not result.orphans, "rows of formats/audit.yaml without a claim:\n" + "\n".join(
        f"  {r['at']} {r['key']} {r['release']}" for r in result.orphans)
    assert not result.malformed, "\n".join(f"  {r['at']} {r['key']} {r['release']}: {why}"
                                           for r, why in result.malformed)


def test_the_table_covers_every_kind_of_claim():
    keys = {c.key for c in audit.claims()}
    assert {"-rmq-since", "-rmq-changes", "-rmq-before", "-rmq-cases/since", "x-since", "x-until",
            "x-changes", "since", "changes"} <= keys
    assert len(audit.table()) == len(audit.claims()) > 200
    assert len({c.ident for c in audit.claims()}) == len(audit.claims())  # each claim is one row


def test_an_annotation_without_a_row_fails():
    """Dropping a row leaves its claim missing; a row for an annotation that is gone is an orphan."""
    rows = audit.table()
    i = next(i for i, r in enumerate(rows) if r["at"].endswith("types/sys_flag/seq/needs_unwrap"))
    result = audit.check(rows[:i] + rows[i + 1:])
    assert [c.at for c in result.missing] == ["formats/rocketmq_commitlog.ksy:types/sys_flag/seq/needs_unwrap"]
    moved = copy.deepcopy(rows)
    moved[i]["release"] = "4.9.4"  # the old, wrong date: no annotation says it any more
    result = audit.check(moved)
    assert result.missing and result.orphans[0]["at"].endswith("needs_unwrap")


def test_source_rows_name_the_claimed_tag_and_the_tag_before():
    rows = audit.table()
    bad = copy.deepcopy(next(r for r in rows if r["at"].endswith("types/sys_flag/seq/is_inner_batch")))
    assert bad["evidence"].startswith("rocketmq-all-5.0.0:") and bad["before"].startswith("rocketmq-all-4.9.8")
    bad["before"] = "rocketmq-all-4.9.3: not set"
    assert any("tag before" in why for _, why in audit.check([bad]).malformed)
    bad["how"] = "guess"
    assert any("how is" in why for _, why in audit.check([bad]).malformed)


def test_the_audits_corrections_are_in_the_table():
    rows = {(r["at"], r["key"], str(r["release"])): r for r in audit.table()}
    cl = "formats/rocketmq_commitlog.ksy"
    for bit in ("needs_unwrap", "is_inner_batch"):
        row = rows[(f"{cl}:types/sys_flag/seq/{bit}", "-rmq-since", "5.0.0")]
        assert "SendMessageProcessor.java" in row["evidence"] and "no 4.9.x code sets it" in row["before"]
    assert (f"{cl}:types/record/seq/len_record", "-rmq-changes", "4.9.5") in rows
    assert "DefaultMQProducerImpl.java" in rows[(f"{cl}:types/sys_flag/seq/compression_type", "-rmq-since",
                                                 "4.9.4")]["evidence"]
    assert rows[("formats/releases.yaml:files/rocksdb_topics", "changes", "5.3.1")]["how"] == "source"
    assert rows[("formats/rocketmq_rocksdb_cq_key.ksy", "-rmq-changes", "5.3.1")]["how"] == "source"
    assert rows[("formats/rocketmq_dledger_data.ksy", "-rmq-changes", "5.5.1")]["how"] == "pr-thread"


def test_the_spec_titles_ranges_start_where_the_specs_do():
    """`meta.application` says `(X to ...)` or `(X and later)`: X is the spec's `-rmq-since` (or the
    untagged version it stands for)."""
    for path in sorted((REPO / "formats").glob("*.ksy")):
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        app = spec["meta"].get("application", "")
        first = app.split("(", 1)[1].split(" ", 1)[0] if "(" in app else None
        assert first and rel.at_or_after(first) == rel.at_or_after(spec["-rmq-since"]), (path.name, app)


def test_the_audit_file_documents_its_rows():
    text = (REPO / "formats" / "audit.yaml").read_text(encoding="utf-8")
    for key in audit.ROW_KEYS:
        assert f"#   {key}:" in text


def test_claims_past_the_tagged_source_say_which_threads_establish_them():
    """A release after 5.3.3 is not in the source mirror: its rows are established from PR or issue threads
    (or release notes), name at least one thread, and every such release's facts have rows."""
    newest_tag = rel.release("5.3.3")
    later = [r for r in audit.table() if rel.at_or_after(str(r["release"])) > newest_tag]
    assert {str(r["release"]) for r in later} >= {"5.3.4", "5.4.0", "5.5.0", "5.5.1"}
    for r in later:
        assert r["how"] != "source", r["at"]
        assert "#" in r["evidence"], r["at"]
    by_at = {(r["at"], str(r["release"])) for r in later}
    for at, release in [("formats/releases.yaml:files/config_json", "5.3.4"),
                        ("formats/releases.yaml:files/rocksdb_config_metadata", "5.3.4"),
                        ("formats/rocketmq_rocksdb_cq_key.ksy", "5.3.4"),
                        ("formats/rocketmq_commitlog.ksy", "5.4.0"),
                        ("formats/rocketmq_commitlog.ksy:types/message/seq/properties", "5.4.0"),
                        ("formats/rocketmq_checkpoint.ksy:seq/logics_msg_timestamp", "5.5.0"),
                        ("formats/rocketmq_commitlog.ksy", "5.5.0"),
                        ("formats/releases.yaml:files/config_json", "5.5.0"),
                        ("formats/rocketmq_rocksdb_cq_key.ksy", "5.5.1"),
                        ("formats/rocketmq_dledger_data.ksy", "5.5.1"),
                        ("formats/releases.yaml:files/config_json", "5.5.1")]:
        assert (at, release) in by_at, (at, release)

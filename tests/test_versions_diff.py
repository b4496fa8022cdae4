"""schema-diff between release pairs, checked change by change against section 9 of the byte-level reference.

Each expected change is `(rule, location, compatible)`: compatible answers "can a reader of A read
what B writes?". The reference's section 9 row each group comes from is named in the comment.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from rmqformats.cli import main
from rmqformats.cli import status
from rmqformats.versions.diff import diff

CL = "formats/rocketmq_commitlog.ksy"
CP = "formats/rocketmq_checkpoint.ksy"
CFG = "formats/config"
REL = "formats/releases.yaml:files"

EXPECTED: dict[tuple[str, str], list[tuple[str, str, bool]]] = {
    # 9.1 "IPv6: SYSFLAG bits 4/5, host fields 8 or 20 bytes" (4.6.0); 9.1 "CLUSTER property" (4.6.0).
    ("4.5.2", "4.6.0"): [
        ("FIELD_WIDTH_CHANGED", f"{CL}:types/message/seq/born_host", False),
        ("FIELD_WIDTH_CHANGED", f"{CL}:types/message/seq/store_host", False),
        ("FLAG_BIT_ADDED", f"{CL}:types/sys_flag/seq/is_born_host_v6", False),
        ("FLAG_BIT_ADDED", f"{CL}:types/sys_flag/seq/is_store_host_v6", False),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True),
        ("MEANING_CHANGED", f"{CL}:types/message/seq/properties", True),  # UNIQ_KEY with IPv6
    ],
    # 9.1 "Compression-type bits 8-10 (LZ4/ZSTD/ZLIB)" (set by 4.9.4 producer clients) and the
    # maximum size checked on the body only (4.9.4); NEED_UNWRAP / INNER_BATCH are only declared
    # in 4.9.4 (no 4.9.x code sets them).
    ("4.9.3", "4.9.4"): [
        ("FLAG_BIT_ADDED", f"{CL}:types/sys_flag/seq/compression_type", False),
        ("ENUM_VALUE_ADDED", f"{CL}:enums/compression_type/0x1", False),
        ("ENUM_VALUE_ADDED", f"{CL}:enums/compression_type/0x2", False),
        ("ENUM_VALUE_ADDED", f"{CL}:enums/compression_type/0x3", False),
        ("MEANING_CHANGED", f"{CL}:types/record/seq/len_record", False),
    ],
    # The record cap maxMessageSize + 64 KiB (rocketmq-all-4.9.5 MessageExtEncoder in CommitLog.java).
    ("4.9.4", "4.9.5"): [
        ("MEANING_CHANGED", f"{CL}:types/record/seq/len_record", False),
    ],
    # rocksdbCQDoubleWriteEnable: a RocksDB consume queue in consumequeue/ beside the file queues;
    # the kvDataVersion and forbidden column families of every ConfigRocksDBStorage database.
    ("5.3.0", "5.3.1"): [
        ("MEANING_CHANGED", "formats/rocketmq_rocksdb_cq_key.ksy", True),
        ("MEANING_CHANGED", f"{REL}/rocksdb_topics", False),
        ("MEANING_CHANGED", f"{REL}/rocksdb_subscription_groups", False),
        ("MEANING_CHANGED", f"{REL}/rocksdb_consumer_offsets", False),
        ("MEANING_CHANGED", f"{REL}/acl_users", False),
        ("MEANING_CHANGED", f"{REL}/acl_acls", False),
    ],
    # 9.1 inner batch, timer and POP properties (5.0.0); 9.2 BatchConsumeQueue, timer files,
    # masterFlushedOffset, abort PID (5.0.0); 9.3 stateVersion, dataVersion, groupTopicMap,
    # forbiddenTable, attributes, SubscriptionGroupConfig keys, the new files (5.0.0).
    ("4.9.8", "5.0.0"): [
        ("FLAG_BIT_ADDED", f"{CL}:types/sys_flag/seq/is_inner_batch", False),  # SendMessageProcessor
        ("FLAG_BIT_ADDED", f"{CL}:types/sys_flag/seq/needs_unwrap", False),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True),
        ("MEANING_CHANGED", f"{CL}:types/message/seq/properties", True),  # WAIT stored again
        ("FILE_ADDED", "formats/rocketmq_batch_consumequeue.ksy", False),
        ("FIELD_ADDED", f"{CP}:seq/ofs_master_flushed", True),
        ("FILE_ADDED", "formats/rocketmq_timer_check.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_timer_log.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_timer_wheel.ksy", False),
        ("JSON_KEY_ADDED", f"{CFG}/common.schema.json:/$defs/dataVersion/properties/stateVersion", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOffset.schema.json:/properties/dataVersion", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOffset.schema.json:/properties/groupTopicMap", True),
        ("FILE_ADDED", f"{CFG}/consumerOrderInfo.schema.json", False),
        ("JSON_KEY_ADDED", f"{CFG}/delayOffset.schema.json:/properties/dataVersion", True),
        ("FILE_ADDED", f"{CFG}/messageRequestMode.schema.json", False),
        ("JSON_KEY_ADDED",
         f"{CFG}/subscriptionGroup.schema.json:/$defs/subscriptionGroupConfig/properties/consumeMessageOrderly", True),
        ("JSON_KEY_ADDED",
         f"{CFG}/subscriptionGroup.schema.json:/$defs/subscriptionGroupConfig/properties/consumeTimeoutMinute", True),
        ("JSON_KEY_ADDED",
         f"{CFG}/subscriptionGroup.schema.json:/$defs/subscriptionGroupConfig/properties/groupRetryPolicy", True),
        ("JSON_KEY_ADDED",
         f"{CFG}/subscriptionGroup.schema.json:/$defs/subscriptionGroupConfig/properties/groupSysFlag", True),
        ("JSON_KEY_ADDED", f"{CFG}/subscriptionGroup.schema.json:/properties/forbiddenTable", True),
        ("FILE_ADDED", f"{CFG}/timermetrics.schema.json", False),
        ("FILE_ADDED", f"{CFG}/topicQueueMapping.schema.json", False),
        ("JSON_KEY_ADDED", f"{CFG}/topics.schema.json:/$defs/topicConfig/properties/attributes", True),
        ("MEANING_CHANGED", f"{REL}/abort", True),
        ("FILE_ADDED", f"{REL}/abort_bak", False),
        ("FILE_ADDED", f"{REL}/epoch_checkpoint", False),
        # consumerOrderInfo.json as 5.0.0 writes it: OrderInfo's keys under their own names.
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/commitOffsetBit", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/consumedCount", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/lastConsumeTimestamp", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/offsetList", True),
    ],
    # 9.1 "V2 magic 0xDAA320AB with s2 topic length", DLQ properties (5.1.0); 9.2 compaction log,
    # SparseConsumeQueue, position-checkpoint, tiered index TieredIndexFile (5.1.0);
    # 9.3 cleanup.policy (5.1.0).
    ("5.0.0", "5.1.0"): [
        ("MAGIC_ADDED", f"{CL}:enums/magic_code/0xdaa320ab", False),
        ("CASE_ADDED", f"{CL}:types/message/seq/len_topic/type/cases/magic_code::message_v2", False),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True),
        ("MEANING_CHANGED", f"{CL}:types/message/seq/topic", False),  # retry topics up to 255 bytes
        ("FILE_ADDED", f"{CFG}/position-checkpoint.schema.json", False),
        ("MEANING_CHANGED", f"{CFG}/topics.schema.json:/$defs/topicConfig/properties/attributes", True),
        ("FILE_ADDED", f"{REL}/compaction", False),
        ("FILE_ADDED", f"{REL}/compaction_log", False),
        ("FILE_ADDED", f"{REL}/compaction_cq", False),
        ("FILE_ADDED", "formats/rocketmq_tiered_commitlog.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_tiered_index.ksy", False),
        ("FILE_ADDED", f"{REL}/tiered_metadata", False),
        # consumerOrderInfo.json: OrderInfo's keys get @JSONField short names, and new ones
        # (rocketmq-all-5.1.0 ConsumerOrderInfoManager.java).
        ("JSON_KEY_REMOVED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/commitOffsetBit", True),
        ("JSON_KEY_REMOVED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/consumedCount", True),
        ("JSON_KEY_REMOVED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/lastConsumeTimestamp", True),
        ("JSON_KEY_REMOVED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/offsetList", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/cm", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/i", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/l", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/o", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/oc", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/ot", True),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/popTime", True),
    ],
    # 9.2 "StoreCheckpoint confirmPhyOffset @32" (5.1.1); 9.3 subscriptionDataSet (5.1.1);
    # brokerIdentity (section 1.2, 5.1.1).
    ("5.1.0", "5.1.1"): [
        ("FIELD_ADDED", f"{CP}:seq/ofs_confirm_phy", True),
        ("JSON_KEY_ADDED",
         f"{CFG}/subscriptionGroup.schema.json:/$defs/subscriptionGroupConfig/properties/subscriptionDataSet", True),
        ("FILE_ADDED", f"{REL}/broker_identity", False),
        ("JSON_KEY_ADDED", f"{CFG}/consumerOrderInfo.schema.json:/$defs/orderInfo/properties/a", True),  # attemptId
    ],
    # 9.1 "Optional __CRC32# record-CRC property; trailing \\u0002 restored" (5.2.0); 9.2 RocksDB
    # consume queue, tiered index IndexStoreFile (5.2.0); 9.3 transactionMetrics (5.2.0).
    ("5.1.4", "5.2.0"): [
        ("MEANING_CHANGED", f"{CL}:types/message/seq/properties", True),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True),
        ("FILE_ADDED", f"{CFG}/transactionMetrics.schema.json", False),
        ("FILE_ADDED", "formats/rocketmq_rocksdb_cq_checkpoint.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_rocksdb_cq_key.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_rocksdb_cq_offset.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_rocksdb_cq_offset_key.ksy", False),
        ("FILE_ADDED", "formats/rocketmq_rocksdb_cq_unit.ksy", False),
        ("MEANING_CHANGED", "formats/rocketmq_tiered_index.ksy", False),
    ],
    # Downgrade of the same row: a 5.2.0 reader of a 5.1.4 store lacks the 5.1 tiered index format.
    ("5.2.0", "5.1.4"): [
        ("MEANING_CHANGED", f"{CL}:types/message/seq/properties", True),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True),
        ("FILE_REMOVED", f"{CFG}/transactionMetrics.schema.json", True),
        ("FILE_REMOVED", "formats/rocketmq_rocksdb_cq_checkpoint.ksy", True),
        ("FILE_REMOVED", "formats/rocketmq_rocksdb_cq_key.ksy", True),
        ("FILE_REMOVED", "formats/rocketmq_rocksdb_cq_offset.ksy", True),
        ("FILE_REMOVED", "formats/rocketmq_rocksdb_cq_offset_key.ksy", True),
        ("FILE_REMOVED", "formats/rocketmq_rocksdb_cq_unit.ksy", True),
        ("MEANING_CHANGED", "formats/rocketmq_tiered_index.ksy", True),
    ],
    # 9.3 "DataVersion.timestatmp (misspelled) 4.0.0 only", "DataVersion.timestamp", consumerFilter.json
    # (4.1.0); 9.2 ConsumeQueueExt (4.1.0); 9.1 batch sending (4.1.0). Downgrade: all readable.
    ("4.1.0", "4.0.0"): [
        ("FILE_REMOVED", "formats/rocketmq_consumequeue_ext.ksy", True),
        ("FILE_REMOVED", "formats/rocketmq_message_batch.ksy", True),
        ("JSON_KEY_REMOVED", f"{CFG}/common.schema.json:/$defs/dataVersion/properties/timestamp", True),
        ("JSON_KEY_ADDED", f"{CFG}/common.schema.json:/$defs/dataVersion/properties/timestatmp", True),
        ("FILE_REMOVED", f"{CFG}/consumerFilter.schema.json", True),
    ],
    # 9.2 "Index hashSlotCount counts used slots instead of entries" (4.7.1).
    ("4.7.0", "4.7.1"): [
        ("MEANING_CHANGED", "formats/rocketmq_index_file.ksy:types/index_header/seq/num_hash_slots_used", True),
    ],
    # 9.1 "Single-message BLANK writes only 8 bytes", "Property string without trailing \\u0002",
    # "WAIT property stripped on store" (4.9.1).
    ("4.9.0", "4.9.1"): [
        ("MEANING_CHANGED", f"{CL}:types/message/seq/properties", True),
        ("MEANING_CHANGED", f"{CL}:types/message/seq/properties", True),
        ("MEANING_CHANGED", f"{CL}:types/record/instances/len_padding", True),
    ],
}


@pytest.mark.parametrize("pair", list(EXPECTED), ids=lambda p: f"{p[0]}->{p[1]}")
def test_diff_matches_the_reference(pair):
    d = diff(*pair)
    assert Counter((c.rule, c.location, c.compatible) for c in d.changes) == Counter(EXPECTED[pair])
    assert d.compatible == all(ok for _, _, ok in EXPECTED[pair])
    for c in d.changes:
        assert c.citation and c.citation.split(":", 1)[0].startswith("rocketmq-"), c
        assert c.description


def test_downgrade_from_5_3_3_to_4_9_7_is_readable_by_the_newer_reader():
    """A 5.3.3 reader reads a 4.9.7 store: everything that differs is something 4.9.7 does not write."""
    d = diff("5.3.3", "4.9.7")
    assert d.compatible
    rules = {(c.rule, c.location) for c in d.changes}
    assert ("MAGIC_REMOVED", f"{CL}:enums/magic_code/0xdaa320ab") in rules
    assert ("CASE_REMOVED", f"{CL}:types/message/seq/len_topic/type/cases/magic_code::message_v2") in rules
    assert ("FIELD_REMOVED", f"{CP}:seq/ofs_confirm_phy") in rules
    assert ("FILE_REMOVED", "formats/rocketmq_batch_consumequeue.ksy") in rules
    assert ("JSON_KEY_REMOVED", f"{CFG}/common.schema.json:/$defs/dataVersion/properties/stateVersion") in rules
    back = [c for c in d.changes if c.rule == "PROPERTY_ADDED" and c.release == "5.2.0"]
    assert back and back[0].description.startswith("back to before 5.2.0")


def test_upgrade_from_4_9_7_to_5_3_3_is_not_readable_by_the_older_reader():
    d = diff("4.9.7", "5.3.3")
    assert not d.compatible
    verdicts = {v.format: v.compatible for v in d.formats()}
    assert verdicts["rocketmq_commitlog"] is False  # V2 records
    assert verdicts["rocketmq_checkpoint"] is True  # fields after the ones 4.9.7 reads
    assert verdicts["config/topics.json"] is True  # fastjson skips unknown keys
    assert "rocketmq_consumequeue" not in verdicts  # unchanged


def test_same_release_has_no_changes():
    assert diff("5.1.4", "5.1.4").changes == ()


def test_cli_text_json_and_exit_statuses(capsys):
    assert main(["schema-diff", "4.5.2", "4.6.0"]) == status.FINDINGS
    out = capsys.readouterr().out
    assert "can a reader of 4.5.2 read a store written by 4.6.0? no" in out
    assert " ! FLAG_BIT_ADDED" in out and "rocketmq-all-4.6.0:" in out
    assert main(["schema-diff", "5.3.3", "4.9.7", "--format", "json"]) == status.OK
    doc = json.loads(capsys.readouterr().out)
    assert doc["from"] == "5.3.3" and doc["to"] == "4.9.7" and doc["compatible"] is True
    assert {"rule", "format", "location", "description", "citation", "compatible"} <= set(doc["changes"][0])
    assert main(["schema-diff", "4.7.0", "4.7.1"]) == status.OK
    with pytest.raises(SystemExit) as exc:
        main(["schema-diff", "4.5.0", "4.6.0"])
    assert exc.value.code == status.ERROR
    assert "unknown RocketMQ release '4.5.0'" in capsys.readouterr().err


def test_help_documents_the_exit_statuses(capsys):
    with pytest.raises(SystemExit):
        main(["schema-diff", "--help"])
    out = capsys.readouterr().out
    assert "1  incompatible changes" in out and "0  no incompatible change" in out


@pytest.mark.parametrize("pair, rule, location, cited", [
    (("4.9.8", "5.0.0"), "FLAG_BIT_ADDED", f"{CL}:types/sys_flag/seq/needs_unwrap",
     "rocketmq-all-5.0.0:broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java"),
    (("4.9.4", "4.9.5"), "MEANING_CHANGED", f"{CL}:types/record/seq/len_record",
     "rocketmq-all-4.9.5:store/src/main/java/org/apache/rocketmq/store/CommitLog.java"),
    (("5.3.0", "5.3.1"), "MEANING_CHANGED", f"{REL}/rocksdb_topics",
     "rocketmq-all-5.3.1:common/src/main/java/org/apache/rocketmq/common/config/ConfigRocksDBStorage.java"),
    (("5.3.0", "5.3.1"), "MEANING_CHANGED", "formats/rocketmq_rocksdb_cq_key.ksy",
     "rocketmq-all-5.3.1:store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java"),
])
def test_cli_shows_each_change_with_rule_place_and_citation(capsys, pair, rule, location, cited):
    main(["schema-diff", *pair])
    out = capsys.readouterr().out
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if rule in line and line.rstrip().endswith(location))
    assert lines[i + 2].strip() == f"cited: {cited}"


def test_cli_4_9_3_to_4_9_4_no_longer_lists_the_inner_batch_bits(capsys):
    main(["schema-diff", "4.9.3", "4.9.4"])
    out = capsys.readouterr().out
    assert "needs_unwrap" not in out and "is_inner_batch" not in out
    assert "compression_type" in out and "written by the producer client" in out


def test_releases_newer_than_the_tagged_source_are_flagged(capsys):
    """5.3.4 is known from its release threads only: its diff says changes may be missing."""
    assert [r.version for r in diff("5.3.3", "5.3.4").unverified] == ["5.3.4"]
    assert diff("5.3.0", "5.3.1").unverified == ()
    main(["schema-diff", "5.3.3", "5.3.4"])
    assert "note: 5.3.4 not in the tagged source" in capsys.readouterr().out
    main(["schema-diff", "5.5.0", "5.3.3", "--format", "json"])
    assert json.loads(capsys.readouterr().out)["unverifiedReleases"] == ["5.3.4", "5.4.0", "5.5.0"]


CQK = "formats/rocketmq_rocksdb_cq_key.ksy"
#: The changes of the releases after the tagged source, as formats/releases.yaml records how each was
#: established (PR and issue threads, files of the code index): `(rule, location, compatible, cited)`.
NEWER: dict[tuple[str, str], list[tuple[str, str, bool, str]]] = {
    ("5.3.3", "5.3.4"): [
        ("MEANING_CHANGED", CQK, True,
         "rocketmq-all-5.3.4:store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java"),
        ("MEANING_CHANGED", f"{REL}/config_json", True,
         "rocketmq-all-5.3.4:common/src/main/java/org/apache/rocketmq/common/ConfigManager.java"),
        ("FILE_ADDED", f"{REL}/rocksdb_config_metadata", False,
         "rocketmq-all-5.3.4:broker/src/main/java/org/apache/rocketmq/broker/config/v1/"
         "RocksDBConsumerOffsetManager.java"),
    ],
    ("5.3.4", "5.4.0"): [
        ("MEANING_CHANGED", CL, True,
         "rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/store/index/rocksdb/IndexRocksDBStore.java"),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True,
         "rocketmq-all-5.4.0:common/src/main/java/org/apache/rocketmq/common/message/MessageConst.java"),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True,
         "rocketmq-all-5.4.0:store/src/main/java/org/apache/rocketmq/store/transaction/"
         "TransMessageRocksDBStore.java"),
    ] + [("FILE_ADDED", f"formats/rocketmq_rocksdb_{k}.ksy", False, "") for k in (
        "index_key", "index_value", "message_mark", "timer_key", "timer_value", "trans_key", "trans_value")],
    ("5.4.0", "5.5.0"): [
        ("MEANING_CHANGED", f"{CP}:seq/logics_msg_timestamp", True,
         "rocketmq-all-5.5.0:store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java"),
        ("MEANING_CHANGED", CL, True,
         "rocketmq-all-5.5.0:store/src/main/java/org/apache/rocketmq/store/CommitLog.java"),
        ("PROPERTY_ADDED", f"{CL}:types/message/seq/properties", True,
         "rocketmq-all-5.5.0:common/src/main/java/org/apache/rocketmq/common/message/MessageConst.java"),
        ("FILE_ADDED", f"{REL}/rocksdb_consumequeue_separate", False,
         "rocketmq-all-5.5.0:store/src/main/java/org/apache/rocketmq/store/config/StorePathConfigHelper.java"),
        ("MEANING_CHANGED", f"{REL}/config_json", True,
         "rocketmq-all-5.5.0:remoting/src/main/java/org/apache/rocketmq/remoting/protocol/"
         "RemotingSerializable.java"),
    ],
    ("5.5.0", "5.5.1"): [
        ("DEPRECATED", "formats/rocketmq_dledger_data.ksy", True,
         "rocketmq-all-5.5.1:store/src/main/java/org/apache/rocketmq/store/dledger/DLedgerCommitLog.java"),
        ("MEANING_CHANGED", "formats/rocketmq_dledger_data.ksy", True, "rocketmq-all-5.5.1:pom.xml"),
        ("MEANING_CHANGED", CQK, True,
         "rocketmq-all-5.5.1:store/src/main/java/org/apache/rocketmq/store/queue/CombineConsumeQueueStore.java"),
        ("MEANING_CHANGED", f"{REL}/config_json", True,
         "rocketmq-all-5.5.1:broker/src/main/java/org/apache/rocketmq/broker/offset/"
         "ConsumerOffsetManager.java"),
    ],
}


@pytest.mark.parametrize("pair", list(NEWER), ids=lambda p: f"{p[0]}->{p[1]}")
def test_newer_releases_list_each_change_with_rule_place_and_citation(pair, capsys):
    d = diff(*pair)
    assert Counter((c.rule, c.location, c.compatible) for c in d.changes) == Counter(
        (rule, loc, ok) for rule, loc, ok, _ in NEWER[pair])
    cited = {(c.rule, c.location, c.citation) for c in d.changes}
    for rule, loc, _, cite in NEWER[pair]:
        if cite:
            assert (rule, loc, cite) in cited
    assert [r.version for r in d.unverified] == [pair[1]]
    main(["schema-diff", *pair])
    out = capsys.readouterr().out
    for rule, loc, _, cite in NEWER[pair]:
        assert any(rule in line and line.rstrip().endswith(loc) for line in out.splitlines())
        if cite:
            assert f"cited: {cite}" in out


def test_going_back_from_5_5_0_to_5_4_0_config_json_is_not_readable():
    """A 5.5.0 broker's fastjson2 refuses the unquoted integer keys a 5.4.0 broker writes (#10284)."""
    d = diff("5.5.0", "5.4.0")
    bad = [c for c in d.changes if c.location == f"{REL}/config_json"]
    assert len(bad) == 1 and not bad[0].compatible and "unquoted" in bad[0].description

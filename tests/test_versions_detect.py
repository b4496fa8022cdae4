"""Release detection on the vector stores: the range holds the true release and is as narrow as the
evidence allows; docs/formats.md is current."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import store_path
from rmqformats.cli import main
from rmqformats.store import open_store
from rmqformats.versions import releases as rel
from rmqformats.versions.detect import Detector, detect
from rmqformats.versions.docs import render

REPO = Path(__file__).resolve().parents[1]

#: The narrowest range the evidence of each vector store allows, and why:
#: 4.9.7: IPv6 flags (>= 4.6.0), properties without the trailing separator (4.9.1 to 5.1.x), no
#:        DataVersion.stateVersion in the config files (< 5.0.0); nothing tells 4.9.1 from 4.9.8.
#: 5.1.4: V2 records and compaction/ (>= 5.1.0), SubscriptionGroupConfig.attributes (>= 5.1.3),
#:        properties without the trailing separator (< 5.2.0).
#: 5.3.3: `__CRC32#` and the trailing separator (>= 5.2.0); no later change leaves a trace here.
EXPECTED = {"4.9.7": ("4.9.1", "4.9.8"), "5.1.4": ("5.1.3", "5.1.4"), "5.3.3": ("5.2.0", None)}


@pytest.mark.parametrize("release", list(EXPECTED))
def test_detection_on_the_vector_stores(release):
    w = detect(open_store(store_path(f"rocketmq-{release}")))
    lo, hi = EXPECTED[release]
    assert (w.min.version, w.max.version if w.max else None) == (lo, hi)
    true = rel.release(release)
    assert w.min <= true and (w.max is None or true <= w.max)
    assert w.set_aside == ()
    for e in w.evidence:
        assert e.citation and e.citation.startswith("rocketmq-") and e.location.startswith("formats/")
        assert e.allows(true)
    observations = " | ".join(e.observation for e in w.evidence)
    if release == "4.9.7":
        assert "IPv6 born host" in observations and "without U+0002" in observations
        assert "no key stateVersion" in observations
        assert "slots used for 255 entries" in observations  # hashSlotCount counts slots (4.7.1+)
    if release == "5.1.4":
        assert "V2 record" in observations and "key attributes in config/subscriptionGroup.json" in observations
    if release == "5.3.3":
        assert "`__CRC32#` property" in observations and "end with U+0002" in observations
        assert "timerwheel exists" in observations


def test_each_bound_has_its_evidence():
    w = detect(open_store(store_path("rocketmq-5.1.4")))
    lower = [e for e in w.evidence if not e.outside and e.since == w.min]
    upper = [e for e in w.evidence if (e.until is not None and not e.outside and e.until == rel.following(w.max))
             or (e.outside and e.until is None and e.since == rel.following(w.max))]
    assert lower and upper
    doc = w.to_json()
    assert doc["min"] == "5.1.3" and doc["max"] == "5.1.4"
    assert {"observation", "releases", "citation", "spec"} <= set(doc["evidence"][0])


def test_commit_log_alone_and_config_alone(tmp_path):
    """Without its config files, the 5.1.4 store still shows 5.1.x from its records and folders."""
    root = tmp_path / "store"
    shutil.copytree(store_path("rocketmq-5.1.4"), root)
    shutil.rmtree(root / "config")
    w = detect(open_store(root))
    assert (w.min.version, w.max.version) == ("5.1.0", "5.1.4")


@dataclass
class _Msg:
    commitlog_offset: int
    version: int
    sys_flag: int
    properties_raw: str


def test_a_store_written_by_several_releases_keeps_its_lower_bounds():
    """An upgraded store: 4.6.0-style records without the separator, then 5.2.0 records with __CRC32#."""
    d = Detector()
    d.message(_Msg(0, 1, 0x10, "TAGS\x01a"))
    d.message(_Msg(100, 1, 0, "TAGS\x01a\x02__CRC32#\x010123456789\x02"))
    w = d.result()
    assert w.min.version == "5.2.0" and w.max is None


def test_nothing_known_gives_every_release():
    w = Detector().result()
    assert w.min == rel.oldest() and w.max is None and w.evidence == ()


def test_inspect_shows_the_range(capsys):
    assert main(["inspect", str(store_path("rocketmq-5.1.4"))]) == 0
    out = capsys.readouterr().out
    assert "written by 5.1.3\u20135.1.4" in out
    assert main(["inspect", "--format", "json", str(store_path("rocketmq-4.9.7"))]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["writtenBy"]["min"] == "4.9.1" and doc["writtenBy"]["max"] == "4.9.8"
    assert doc["writtenBy"]["evidence"]
    assert main(["inspect", "--format", "json", str(store_path("rocketmq-5.3.3"))]) == 0
    assert json.loads(capsys.readouterr().out)["writtenBy"]["max"] is None


def test_formats_doc_is_current():
    """docs/formats.md is generated from the specs: `make generate` after changing formats/."""
    assert (REPO / "docs" / "formats.md").read_text(encoding="utf-8") == render(), \
        "docs/formats.md is stale: run `make generate`"


def test_formats_doc_has_the_version_columns_and_the_readme_links_it():
    text = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    assert "| `is_born_host_v6` | b1 |" in text and "| 4.6.0 |" in text
    assert "| `ofs_confirm_phy` | s8 |" in text
    assert "`0xdaa320ab` | `message_v2`" in text
    assert "](docs/formats.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_summary_prints_every_allowed_range_with_its_gaps():
    """IPv6 hosts (>= 4.6.0) and a trailing separator (not 4.9.1 to 5.1.x) leave two ranges."""
    d = Detector()
    d.message(_Msg(0, 1, 0x10, "TAGS\x01a\x02"))
    w = d.result()
    assert [(lo.version, hi.version) for lo, hi in w.ranges] == [("4.6.0", "4.9.0"),
                                                                  ("5.2.0", rel.newest().version)]
    assert w.summary() == "4.6.0\u20134.9.0 or 5.2.0 or later"
    doc = w.to_json()
    assert doc["summary"] == w.summary()
    assert doc["ranges"] == [{"min": "4.6.0", "max": "4.9.0"}, {"min": "5.2.0", "max": None}]
    # The separator evidence cites the decoder's change, not the 4.9.1 WAIT change.
    sep = next(e for e in w.evidence if "U+0002" in e.observation)
    assert "MessageDecoder.java" in sep.citation and "SendMessageProcessor" not in sep.citation


def test_a_closed_range_and_a_single_release_read_exactly():
    d = Detector()
    d.message(_Msg(0, 1, 0, "TAGS\x01a"))  # no trailing separator: 4.9.1 to 5.1.4
    assert d.result().summary() == "4.9.1\u20135.1.4"
    assert d.result().ranges == ((rel.release("4.9.1"), rel.release("5.1.4")),)


def test_compression_type_bits_are_evidence_about_the_client_only():
    """A 4.9.3 broker stores the compression-type bits a 4.9.4+ producer sets: no broker is excluded."""
    d = Detector()
    d.message(_Msg(0, 1, 0x201, "TAGS\x01a\x02"))  # compressed, ZSTD type bits, trailing separator
    w = d.result()
    assert rel.release("4.9.0") in [r for lo, hi in w.ranges for r in rel.RELEASES if lo <= r <= hi]
    assert w.summary() == "4.0.0\u20134.9.0 or 5.2.0 or later"
    assert not any("compression" in e.observation for e in w.evidence)
    (client,) = w.client
    assert client.about == "client" and client.since.version == "4.9.4"
    assert "DefaultMQProducerImpl.java" in client.citation
    assert w.to_json()["client"][0]["about"] == "client"


def test_inner_batch_bit_dates_the_broker_from_5_0_0():
    d = Detector()
    d.message(_Msg(0, 1, 0x80 | 0x40, "TAGS\x01a\x02"))
    w = d.result()
    assert w.min.version == "5.2.0"  # with the trailing separator
    e = next(e for e in w.evidence if "inner-batch" in e.observation)
    assert e.since.version == "5.0.0" and "SendMessageProcessor.java" in e.citation


def test_the_5_3_1_config_column_families_are_evidence(tmp_path):
    """A v1 RocksDB config database whose OPTIONS file lists kvDataVersion and forbidden: 5.3.1 or later."""
    db = tmp_path / "config" / "topics"
    db.mkdir(parents=True)
    (db / "OPTIONS-000005").write_text('[CFOptions "default"]\n')
    (db / "OPTIONS-000012").write_text('[CFOptions "default"]\n[CFOptions "kvDataVersion"]\n'
                                       '[CFOptions "forbidden"]\n')
    d = Detector()
    d.store(str(tmp_path))
    w = d.result()
    assert w.min.version == "5.3.1" and w.summary() == "5.3.1 or later"
    e = next(e for e in w.evidence if "column families" in e.observation)
    assert "OPTIONS-000012" in e.observation and "ConfigRocksDBStorage.java" in e.citation
    (db / "OPTIONS-000012").unlink()  # only the 5.1.4-era file: the database proves 5.1.4 or later
    d = Detector()
    d.store(str(tmp_path))
    assert d.result().min.version == "5.1.4"


@pytest.mark.parametrize("folder, since", [
    ("config/metadata", "5.3.4"),  # useSingleRocksDBForAllConfigs (PR #9774)
    ("rocksdbstore", "5.4.0"),  # the RocksDB message store (RIP-82)
    ("consumequeue_rocksdb", "5.5.0"),  # useSeparateStorePathForRocksdbCQ
])
def test_the_folders_of_releases_after_5_3_3_are_evidence(tmp_path, folder, since):
    db = tmp_path / folder
    db.mkdir(parents=True)
    (db / "CURRENT").write_text("MANIFEST-000001\n")
    d = Detector()
    d.store(str(tmp_path))
    w = d.result()
    assert w.min.version == since and w.max is None
    assert any(since in e.citation for e in w.evidence)

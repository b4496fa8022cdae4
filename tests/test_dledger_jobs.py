"""A DLedger commit log walked by several worker processes gives the serial walk's answer, byte for byte.

The DLedger copies of the vector stores (:mod:`layoutstores`) have five
256 KiB data files; ranges are made 4 KiB here and the serial threshold 0,
so that each file is cut into many ranges. The entries' terms rise every
40 entries, so that a smaller term is a damage the walk must see.
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest

from rmqformats.dledger import DLedgerEndReason
from rmqformats.columnar import COLUMNS
from rmqformats.dledger.columnar import ENTRY_COLUMNS, DLedgerColumnarScan
from rmqformats.dledger.parallel import ParallelDLedgerScan
from rmqformats.walk.parallel import ParallelScan
from rmqformats.walk import layout as L

from conftest import VERSIONS
from layoutstores import dledger_store
from test_jobs import damage_file, run, walk

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EXAMPLES = int(os.environ.get("RMQFORMATS_JOBS_EXAMPLES", "8"))
JOBS = 3


@pytest.fixture(autouse=True)
def small_ranges(monkeypatch):
    monkeypatch.setenv("RMQFORMATS_JOB_RANGE", "4096")
    monkeypatch.setenv("RMQFORMATS_JOBS_MIN_BYTES", "0")


class _Stores(dict):
    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return f"<the DLedger copies of {', '.join(self)}>"


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Each version's DLedger copy (built once): its root and its entries."""
    built = _Stores()
    for version in VERSIONS:
        root, placed, _ = dledger_store(version, tmp_path_factory.mktemp("dledger") / "store",
                                        terms=(i // 40 for i in itertools.count()))
        built[version] = (root, placed)
    return built


def assert_walks_equal(root, **options) -> ParallelDLedgerScan:
    """Every column, the data end, the BLANK fillers, the last entry's index and term and a strict walk's
    error: one job and several the same."""
    one, table1, error1 = walk(root, 1, **options)
    many, table2, error2 = walk(root, JOBS, **options)
    assert isinstance(many, ParallelScan) and not isinstance(one, ParallelScan)
    assert error2 == error1
    if table1 is not None:
        assert table2.equals(table1)
    assert many.end == one.end
    assert many.blanks == one.blanks
    assert many.bytes_done == one.bytes_done
    # A damaged first file may no longer be taken for DLedger: then both walks are the plain one.
    assert isinstance(many, ParallelDLedgerScan) == isinstance(one, DLedgerColumnarScan)
    if isinstance(one, DLedgerColumnarScan):
        assert (many.last_index, many.last_term) == (one.last_index, one.last_term)
    return many


@pytest.mark.parametrize("options", [{}, {"verify_crc": True}, {"topic": "TopicTest", "from_offset": 300_000},
                                     {"stop": 700_000}, {"start": 262144 + 100, "to_offset": 900_000},
                                     {"columns": COLUMNS + ENTRY_COLUMNS},
                                     {"columns": ENTRY_COLUMNS, "verify_crc": True}])
def test_batches_equal_one_job(stores, version, options):
    root, placed = stores[version]
    scan = assert_walks_equal(root, **options)
    assert scan.ranges_used >= 3  # ranges walked by the workers were used, not walked again here
    if not options:
        assert (scan.last_index, scan.last_term) == (placed[-1].index, placed[-1].term)


def test_commands_equal_one_job(stores, capfdbinary, tmp_path):
    """The commands that sum in the workers (inspect, check) and those that take the batches."""
    root, _ = stores[VERSIONS[-1]]
    for argv in (["inspect", root, "--format", "jsonl"], ["check", root, "--format", "jsonl"],
                 ["messages", root, "--format", "jsonl"], ["dledger", root], ["dledger", root, "--format", "jsonl"],
                 ["dledger", root, "--from-index", 130, "--limit", 90], ["dledger", root, "--check-index"]):
        one = run(capfdbinary, *argv, "--jobs", 1)
        assert run(capfdbinary, *argv, "--jobs", JOBS) == one
        assert one[1]
    for jobs in (1, JOBS):
        assert run(capfdbinary, "export", root, "--to", "parquet", tmp_path / f"p{jobs}", "--jobs", jobs)[0] == 0
    files = sorted(p.name for p in (tmp_path / "p1").iterdir())
    assert files == sorted(p.name for p in (tmp_path / f"p{JOBS}").iterdir()) and len(files) > 2
    for name in files:
        assert (tmp_path / "p1" / name).read_bytes() == (tmp_path / f"p{JOBS}" / name).read_bytes()


def _data_files(root: Path) -> list[Path]:
    return sorted((root / "dledger-n0" / "data").iterdir())


def _set_field(root: Path, placed, k: int, offset: int, value: int) -> None:
    """Write ``value`` into the 8-byte field at ``offset`` of the header of entry ``k``."""
    entry = placed[k]
    files = _data_files(root)
    start = max(int(p.name) for p in files if int(p.name) <= entry.position)
    with open(root / "dledger-n0" / "data" / f"{start:020d}", "r+b") as f:
        f.seek(entry.position - start + offset)
        f.write(value.to_bytes(8, "big", signed=True))


def test_a_term_that_falls_at_a_file_start(stores, tmp_path):
    """The first entry of a data file, walked by a worker from no entry before, has a smaller term than the
    last entry of the file before: the reader walks that range itself and ends the data there."""
    root0, placed = stores[VERSIONS[-1]]
    root = tmp_path / "store"
    shutil.copytree(root0, root)
    starts = {int(p.name) for p in _data_files(root)}
    k = next(i for i, e in enumerate(placed) if e.position in starts and e.position and e.term > 0)
    _set_field(root, placed, k, L.ENTRY_POS_TERM, placed[k - 1].term - 1)
    scan = assert_walks_equal(root)
    assert scan.end.reason is DLedgerEndReason.TERM_DECREASE and scan.end.offset == placed[k].position
    assert (scan.last_index, scan.last_term) == (placed[k - 1].index, placed[k - 1].term)


def test_an_index_gap_inside_a_file(stores, tmp_path):
    """An entry in the middle of a range, and one at a range's start, with an index that does not follow."""
    root0, placed = stores[VERSIONS[0]]
    for k in (len(placed) // 3, next(i for i, e in enumerate(placed) if e.position % 4096 < 200 and i > 20)):
        root = tmp_path / f"store{k}"
        shutil.copytree(root0, root)
        _set_field(root, placed, k, L.ENTRY_POS_INDEX, placed[k].index + 5)
        for options in ({}, {"strict": True}):
            scan = assert_walks_equal(root, **options)
        assert scan.end.reason is DLedgerEndReason.INDEX_GAP and scan.end.offset == placed[k].position


_FILE_SIZE = 256 << 10
damage = st.lists(st.tuples(st.sampled_from(["cut", "zero", "flip"]), st.integers(0, 4),
                            st.integers(0, _FILE_SIZE - 1), st.integers(1, 5000)), min_size=1, max_size=3)


# Not shrunk: an example takes seconds, and the failing one is printed as it was found.
@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from(VERSIONS), edits=damage)
def test_damaged_dledger_equals_one_job(stores, capfdbinary, tmp_path_factory, version, edits):
    root = tmp_path_factory.mktemp("damaged") / "store"
    shutil.copytree(stores[version][0], root)
    files = _data_files(root)
    for how, i, pos, length in edits:
        damage_file(files[i], how, pos, length)
    for options in ({}, {"verify_crc": True}, {"strict": True}):
        assert_walks_equal(root, **options)
    # The entries listing (a damaged first file may no longer be taken for DLedger: both then refuse it alike).
    for argv in (["dledger", root, "--format", "jsonl"], ["dledger", root, "--verify-crc", "--from-index", 60]):
        assert run(capfdbinary, *argv, "--jobs", JOBS) == run(capfdbinary, *argv, "--jobs", 1)

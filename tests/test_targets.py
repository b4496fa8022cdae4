"""The parsers of every Kaitai target, built with the official runtimes and compared with the truth.

For each language in ``tests/targets/`` (see its README.md): every spec is compiled with the
pinned compiler and built with the language's toolchain against
``../shared/kaitai/runtimes/<lang>``; its driver parses every real vector file and every
value it prints is compared with RocketMQ's ground truth (``tests/targets/truth.py``). The
fields that differ must be exactly the language's named limits (``LIMITS`` in its
``target.py``): everything else equals the truth. The language table (README.md, "Parsers
in other languages") is rendered from these results and checked by the last test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).with_name("targets")))

import harness  # noqa: E402
import table  # noqa: E402
import truth  # noqa: E402

from conftest import VERSIONS, runtimes_missing  # noqa: E402

TARGETS = harness.targets()
SPECS = harness.spec_ids()
REPO = Path(__file__).resolve().parents[1]
table.EXPECTED.update((n, c) for n in TARGETS for c in truth.CHECKS)
table.COMPARED.update(s for specs in truth.SPECS_OF.values() for s in specs)


def _limits(name: str) -> dict[str, str]:
    return dict(TARGETS[name].limits)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """Each target built once per session: name -> (driver or None, {spec: build error})."""
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            target = TARGETS[name]
            missing = target.missing_tools()
            if missing:
                cache[name] = ("missing", f"{name}: toolchain missing ({', '.join(missing)}); "
                                          "run `make setup-toolchains`")
            elif target.missing_runtime() is not None:
                cache[name] = ("missing", f"{name}: {runtimes_missing(target.runtime)}")
            else:
                cache[name] = _build(target, tmp_path_factory.mktemp(f"target-{name}"))
        state = cache[name]
        if state[0] == "missing":
            if os.environ.get("CI"):
                pytest.fail(state[1])
            pytest.skip(state[1])
        return state
    return get


def _build(target: harness.Target, work: Path):
    """All specs in one build; when that fails, each spec alone tells which do not build."""
    try:
        driver = harness.build(target, SPECS, work / "all")
        table.record_builds(target.name, {s: None for s in SPECS}, _build_limits(target.name))
        return driver, {}
    except harness.BuildError:
        pass
    failed = {}
    for spec in SPECS:
        try:
            harness.build(target, [spec], work / f"only-{spec}")
        except harness.BuildError as err:
            failed[spec] = str(err)
    good = [s for s in SPECS if s not in failed]
    table.record_builds(target.name, {s: failed.get(s) for s in SPECS}, _build_limits(target.name))
    driver = harness.build(target, good, work / "good") if good else None
    return driver, failed


def _build_limits(name: str) -> dict[str, str]:
    """Specs a target names as not building there (limit ``"<spec>._build"``), with why."""
    return {f.split(".")[0]: why for f, why in TARGETS[name].limits.items() if f.endswith("._build")}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_every_spec_builds(built, name):
    """Every spec builds, except those the target names as a limit (and those must still fail)."""
    driver, failed = built(name)
    expected = _build_limits(name)
    unexpected = {spec: err for spec, err in failed.items() if spec not in expected}
    assert not unexpected, "\n\n".join(f"{spec}:\n{err[-3000:]}" for spec, err in unexpected.items())
    assert set(expected) <= set(failed), f"{name}: named as not building but built: {set(expected) - set(failed)}"


@pytest.mark.parametrize("check", sorted(truth.CHECKS))
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_values_equal_truth(built, tmp_path, name, check):
    driver, failed = built(name)
    tallies: dict[str, truth.Tally] = {}
    try:
        for version in VERSIONS:
            specs_used = truth.SPECS_OF[check]
            if driver is None or any(s in failed for s in specs_used):
                missing = [s for s in specs_used if s in failed]
                limited = _build_limits(name)
                if all(s in limited for s in missing):
                    pytest.skip(f"{name}: {', '.join(missing)} do not build there (a named limit): "
                                + "; ".join(limited[s] for s in missing))
                pytest.fail(f"{name}: {', '.join(missing)} did not build")
            truth.CHECKS[check](driver, version, tmp_path, tallies)
    except Exception as err:  # a driver that crashed: the table names the check as differing
        if not isinstance(err, (pytest.skip.Exception, pytest.fail.Exception)):
            for spec in truth.SPECS_OF[check]:
                tallies.setdefault(spec, truth.Tally(spec)).diffs.setdefault(f"{spec}._crash", []).append(repr(err))
        raise
    finally:
        table.DONE.add((name, check))  # it ran: the table shows how, also when it failed
        for spec, t in tallies.items():
            table.record_values(name, spec, t.checked, sorted(t.diffs), _limits(name))
    compared = set().union(*(t.fields for t in tallies.values()))
    limits = {f: why for f, why in _limits(name).items() if f in compared}  # the limits this check can see
    differing = {f for t in tallies.values() for f in t.diffs}
    unexpected = {f: t.diffs[f][:5] for t in tallies.values() for f in t.diffs if f not in limits}
    assert not unexpected, f"{name}: values differ from the truth:\n" + "\n".join(
        f"{f}: {examples}" for f, examples in unexpected.items())
    assert set(limits) <= differing, f"{name}: named limits no longer differ (remove them): {set(limits) - differing}"
    assert sum(t.checked for t in tallies.values()) > 0


def test_language_table_in_readme_is_current():
    """The README's table is what this run measured (when every target and check ran here)."""
    rendered = table.render(sorted(TARGETS, key=lambda n: table.ORDER.index(n) if n in table.ORDER else 99), SPECS)
    if rendered is None:
        pytest.skip("not every target ran in this session; the table cannot be checked")
    current = table.readme_table(REPO / table.PAGE)
    assert current == rendered, "the language table changed: run `make targets-table` (docs/guides/parser-packages.md) and commit"

"""bench/server_load.py, small: a dozen machines over three accounts against a real server
converge with nothing lost, rate limited or not, so the load benchmark cannot rot."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench" / "server_load.py"


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("server_load", _BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


load = _load_bench()
# Small and quick: a burst of 2 makes the limited phase meet the limiter at once.
PLAN = load.Plan(
    machines=12, accounts=3, notes=3, edits=3, jitter_s=0.05, limited_seconds=1.0, rate_burst=2
)


def _check(results: list[object], phases: int) -> None:
    assert len(results) == phases
    for result in results:
        assert isinstance(result, load.PhaseResult)
        assert result.problems == [], result.problems
        counts = result.counts
        assert counts["gave_up"] == 0 and counts["transport"] == 0
        assert counts["other_5xx"] == 0
        if result.phase == "unlimited":
            assert counts["rate_limited"] == 0
            assert result.notes == PLAN.machines * PLAN.notes
            assert result.edits == PLAN.machines * PLAN.edits
            # A commit a round; an edit with no note to edit yet waits for a round of its own.
            rounds = PLAN.machines * PLAN.notes
            assert rounds <= counts["accepted"] <= rounds + PLAN.machines * PLAN.edits
        else:
            assert counts["rate_limited"] > 0 and result.retry_after
            assert result.admitted_max <= result.admitted_allowed
            assert result.notes >= PLAN.machines  # at least one round each, every one kept


def test_the_load_converges_on_the_directory_backend(tmp_path: Path) -> None:
    _check(load.run_backend("dir", PLAN, tmp_path), 2)


def test_the_load_converges_on_three_s3_replicas(
    tmp_path: Path, s3_bucket: tuple[str, str, str]
) -> None:
    """Three replicas over one bucket: nothing lost, and the rate limit is shared."""
    _check(load.run_backend("s3", PLAN, tmp_path, s3=s3_bucket, replicas=3), 2)


def test_three_replicas_over_postgres_converge_and_share_the_rate_limit(
    tmp_path: Path, postgres_dsn: str
) -> None:
    """Three server processes over one database, the machines spread over them: nothing
    lost, and an account gets no more through the three than the limiter allows one."""
    results = load.run_backend("postgres", PLAN, tmp_path, dsn=postgres_dsn, replicas=3)
    _check(results, 2)
    assert {r.replicas for r in results} == {3}


def test_the_convergence_check_finds_a_lost_note(tmp_path: Path) -> None:
    """The check can fail: a note a machine believes written but the manifest lacks."""
    machine = load.Machine("m000", "acct000", None, load.USER_SCOPE, load.Stats())
    machine.intents.append(load.Intent("m000-n0", "written by m000 in round 0.", True, done=True))
    witness = load.Machine("w", "acct000", None, load.USER_SCOPE, load.Stats())
    witness.version = 0
    problems, notes, edits = load.check_account("acct000", [machine], witness)
    assert (notes, edits) == (0, 0)
    assert any("1 notes lost" in p for p in problems)


def test_an_unknown_backend_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown backend"):
        load.run_backend("nosuch", PLAN, tmp_path)

"""§2 under real syscall faults: each write path's every kind of write call fails in turn.

Each `memdir` write path runs under strace with one call failing (ENOSPC, EIO) or the
process SIGKILLed at it; `tests/faults/harness.py` says which calls and what is checked
afterwards. Per syscall kind and fault, `MEMDIR_FAULT_CAP` calls are hit (default 3: the
first, the last and one between, a different one for each fault; SQLite's pwrite64,
fdatasync and ftruncate one fewer; 0 hits every call, as `python bench/faults.py --cap 0`
does). The matrix's table is printed at the end of the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from sync_server import add_user, running_server

from .harness import (
    FAULTS,
    RESULTS,
    Plan,
    count,
    default_workers,
    remember_audit,
    run_matrix,
    strace_problem,
)
from .scenarios import Scenario, SyncPull, SyncWorld, make_sync_world, scenarios

_PROBLEM = strace_problem()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(_PROBLEM is not None, reason=f"no syscall fault injection: {_PROBLEM}"),
]

CAP = int(os.environ.get("MEMDIR_FAULT_CAP", "3"))
NAMES = [s.name for s in scenarios()]


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name).strip("-").replace("--", "-")


@pytest.fixture(scope="module")
def sync_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncWorld]:
    """A loopback `memdir server serve` and machine A's notes, synced up."""
    root = tmp_path_factory.mktemp("sync-world")
    data = root / "server"
    data.mkdir()
    token = add_user(data, "alice")
    with running_server(data, extra_args=["--rate-limit", "0"]) as server:
        yield make_sync_world(root / "world", server.url, token)


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    """Counting runs, one per write path, shared by its three faults."""
    return {}


def _scenario(name: str, request: pytest.FixtureRequest) -> Scenario:
    world = request.getfixturevalue("sync_world") if name == SyncPull.name else None
    return next(s for s in scenarios(world) if s.name == name)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("name", NAMES, ids=[_slug(n) for n in NAMES])
def test_a_failing_call_leaves_the_old_or_the_new_state_and_says_which(
    name: str,
    fault: str,
    request: pytest.FixtureRequest,
    plans: dict[str, Plan],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    scenario = _scenario(name, request)
    plan = plans.get(name)
    if plan is None:
        plan = plans[name] = count(scenario, tmp_path_factory.mktemp("count"))
        remember_audit(plan)
    # The counting run saw the writes the matrix is about: it cannot pass vacuously.
    assert plan.targets("rename") and plan.targets("openat"), plan.calls.keys()
    results = run_matrix(
        scenario, fault, plan, tmp_path_factory.mktemp("cases"), cap=CAP, workers=default_workers()
    )
    RESULTS.extend(results)
    fired = [r for r in results if r.outcome != "missed"]
    assert len(fired) * 2 > len(results), "most faults never fired: the counts are off"
    failed = [r for r in results if r.problems]
    assert not failed, f"{len(failed)} of {len(results)} cases broke an invariant:\n" + "\n".join(
        r.describe() for r in failed
    )

"""Tests for `results.py`: the derived properties of the result records."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memdir.core import Scope
from memdir.core.links import Link, LinkReport
from memdir.errors import IntegrityError
from memdir.memory.maintenance import DoctorReport
from memdir.store.audit import AuditReport
from memdir.store.notedir import FileProblem
from memdir.sync.comparison import PassReport
from memdir.sync.replica import SyncRun


def test_dangling_links_are_unresolved_ones_that_are_not_hidden() -> None:
    report = LinkReport(
        "source",
        outgoing=(
            Link("here", Scope.PROJECT, "Here"),
            Link("nowhere", None, None),
            Link("secret-one", None, None),
            Link("gone", None, None),
        ),
        backlinks=(),
        hidden=("secret-one",),
    )
    assert report.dangling == ("nowhere", "gone")
    assert LinkReport("x", (), ()).dangling == ()


@pytest.mark.parametrize(
    "change",
    [
        {"problems": (FileProblem(Scope.PROJECT, Path("bad.md"), "no frontmatter"),)},
        {"dangling": (("a", "b"),)},
        {"warnings": ("user notes are unavailable",)},
        {"leftovers": (Path(".a.md.tmp-1"),)},
    ],
)
def test_doctor_is_ok_only_when_nothing_needs_attention(change: dict[str, object]) -> None:
    healthy = DoctorReport(problems=(), dangling=(), warnings=(), cleaned=3, counts={"user": 1})
    assert healthy.ok
    assert not dataclasses.replace(healthy, **change).ok  # type: ignore[arg-type]


def test_sync_run_counts_the_conflicts_of_every_scope() -> None:
    run = SyncRun(
        reports=[
            PassReport("project", conflicts=["a", "b"]),
            PassReport("user", conflicts=["c"]),
            PassReport("other"),
        ]
    )
    assert run.conflicts == 3
    assert SyncRun().conflicts == 0


@pytest.mark.parametrize("field", ["pulled", "pushed", "merged", "deleted_here", "deleted_there"])
def test_a_pass_changed_when_anything_moved(field: str) -> None:
    assert not PassReport("project", conflicts=["x"], requests=3).changed
    assert PassReport("project", **{field: ["n"]}).changed  # type: ignore[arg-type]


def test_audit_report_raises_only_when_failed() -> None:
    AuditReport(True, 4, 4, "h", ()).raise_if_failed()
    failed = AuditReport(False, 4, 3, "h", ("entry 2: bad hash", "head mismatch"))
    with pytest.raises(IntegrityError) as info:
        failed.raise_if_failed()
    assert str(info.value) == ("audit log failed verification: entry 2: bad hash; head mismatch")


def test_frozen_records_refuse_changes() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Link("a", None, None).target = "b"  # type: ignore[misc]

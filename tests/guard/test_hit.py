"""Tests for `guard/hit.py`: a finding carries only a kind and a line."""

from __future__ import annotations

import dataclasses

import pytest

from memdir.guard import Finding, scan_text

from .corpus import GH_PAT


def test_finding_holds_only_kind_and_line() -> None:
    assert [f.name for f in dataclasses.fields(Finding)] == ["kind", "line"]
    finding = scan_text(f"token: {GH_PAT}")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        finding.line = 2  # type: ignore[misc]
    assert GH_PAT not in repr(finding)

"""The fault matrix's summary table, printed at the end of the run (write path × fault)."""

from __future__ import annotations

import pytest

from .harness import RESULTS, table


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RESULTS:
        return
    terminalreporter.section("syscall fault matrix")
    terminalreporter.write_line(table(RESULTS))
    drifted = [r for r in RESULTS if r.drift]
    if drifted:
        terminalreporter.write_line(
            f"{len(drifted)} cases hit another call than the counting run's Nth "
            "(checked all the same)"
        )

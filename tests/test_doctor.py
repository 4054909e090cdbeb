"""doctor: leftovers of interrupted writes are cleaned, a corrupt project file is reported."""

from __future__ import annotations

from pathlib import Path

from memdir import Memory


def test_doctor_removes_temp_files_of_interrupted_writes(memory: Memory, project: Path) -> None:
    memory.remember("A note that stays", body="content")
    leftover = project / "MEMORY" / ".a-note.md.tmp-deadbeef"
    leftover.write_bytes(b"half a note")
    report = memory.doctor()
    assert report.cleaned == 1
    assert not leftover.exists()
    assert report.leftovers == ()
    assert report.ok
    assert len(memory.list()) == 1


def test_doctor_reports_a_corrupt_project_file(memory: Memory, project: Path) -> None:
    memory.remember("Some note", body="content")
    project_file = project / ".memdir" / "project.json"
    project_file.write_text("{corrupt", encoding="utf-8")
    reopened = Memory.open(project, home=memory.settings.home)
    report = reopened.doctor()
    assert not report.ok
    assert any("project.json" in w for w in report.warnings)
    assert project_file.read_text(encoding="utf-8") == "{corrupt"

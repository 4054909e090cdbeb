"""Files of a note directory that memdir leaves out, and the one warning that names them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memdir.core import Scope

__all__ = ["FileProblem", "is_skipped_message", "skipped_message"]


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A file in a note directory that memdir skips and reports (doctor)."""

    scope: Scope
    path: Path
    reason: str


_SKIPPED_TAIL = "; `memdir doctor` says why"


def skipped_message(scope: Scope, directory: Path, names: Sequence[str]) -> str:
    """The one warning a command gives about the files of a note folder it left out."""
    shown = ", ".join(sorted(names)[:3]) + (", …" if len(names) > 3 else "")
    files = "1 file" if len(names) == 1 else f"{len(names)} files"
    return (
        f"{files} in the {scope.value} notes ({directory}) could not be read as notes and "
        f"{'is' if len(names) == 1 else 'are'} left out ({shown}){_SKIPPED_TAIL}"
    )


def is_skipped_message(text: str) -> bool:
    """Whether a warning is a `skipped_message` (doctor lists those files as problems)."""
    return text.endswith(_SKIPPED_TAIL)

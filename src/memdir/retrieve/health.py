"""The wording of what `doctor` says about a scope's search index (`Retriever.index_findings`
gathers the facts: damage found, disagreements with the files, a disk that refused)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memdir.core import Scope

__all__ = ["SHOWN", "index_messages"]

#: Disagreements between an index and its files listed one by one (the rest are counted).
SHOWN = 20


def index_messages(
    scope: Scope,
    path: Path,
    *,
    damaged_on: str | None,
    disagreements: Sequence[str],
    refused: str | None,
) -> list[str]:
    """The findings about the index of `scope`'s notes at `path`: when damage was found and
    repaired (`damaged_on`), how it differs from the files, why the disk refused a refresh."""
    where = f"the search index of the {scope.value} notes"
    out: list[str] = []
    if damaged_on is not None:
        out.append(
            f"{where} ({path}) was found damaged on {damaged_on} and rebuilt from the note "
            "files; a full reindex re-embeds its vectors and clears this"
        )
    shown = list(disagreements)
    if len(shown) > SHOWN:
        shown = [*shown[: SHOWN - 1], f"and {len(shown) - SHOWN + 1} more"]
    out += [f"{where}: {d}" for d in shown]
    if refused is not None:
        out.append(
            f"{where} ({path}) cannot be updated ({refused}); searches leave out the notes "
            "it is behind on until it can be"
        )
    return out

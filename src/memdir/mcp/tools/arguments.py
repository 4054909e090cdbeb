"""The argument types the note tools share (search mode, scope, type, finding kind, ids).

The input schemas' enums come from the vocabulary (`memdir.core.vocab`), like the CLI's
choices: a plain string in the schema with the members as its `enum`, validated into the
member with an error that lists them (an agent learns the valid values from it).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from memdir.core import NoteType, Scope, SearchMode, choices, validate_id
from memdir.core.ids import ID_PATTERN
from memdir.core.vocab import FindingKind
from memdir.errors import InvalidInput

__all__ = ["KindArg", "Limit", "Mode", "NoteId", "ScopeArg", "TypeArg", "ValidId"]


def _member(vocabulary: type[StrEnum]) -> Callable[[str], StrEnum]:
    names = choices(vocabulary)
    listed = ", ".join(repr(n) for n in names[:-1]) + f" or {names[-1]!r}"

    def member(value: str) -> StrEnum:
        try:
            return vocabulary(value)
        except ValueError:
            raise ValueError(f"expected {listed}") from None

    return member


def _enum(vocabulary: type[StrEnum]) -> Any:
    return Field(json_schema_extra={"enum": list(choices(vocabulary))})


def _note_id(value: str) -> str:
    try:
        return validate_id(value)
    except InvalidInput as exc:
        raise ValueError(str(exc)) from None


Mode = Annotated[str, _enum(SearchMode), AfterValidator(_member(SearchMode))]
ScopeArg = Annotated[str, _enum(Scope), AfterValidator(_member(Scope))]
TypeArg = Annotated[str, _enum(NoteType), AfterValidator(_member(NoteType))]
KindArg = Annotated[str, _enum(FindingKind), AfterValidator(_member(FindingKind))]
NoteId = Annotated[str, Field(description="A note id (from memory_search or the prompt index).")]
#: A note id checked as ids are (for lists of ids, where a bad one is said by its place).
ValidId = Annotated[
    str,
    Field(json_schema_extra={"pattern": f"^{ID_PATTERN.pattern}$"}),
    AfterValidator(_note_id),
]
Limit = Annotated[int, Field(ge=1, le=50, description="At most this many results.")]

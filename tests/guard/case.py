"""One corpus case for the credential guard, shared by the corpus modules."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Case"]


@dataclass(frozen=True, slots=True)
class Case:
    """One text; `secret` is the value that must be found, or "" for a negative."""

    id: str
    lang: str
    kind: str
    text: str
    secret: str = ""

    @property
    def positive(self) -> bool:
        return bool(self.secret)

    @property
    def line(self) -> int:
        return self.text[: self.text.index(self.secret)].count("\n") + 1

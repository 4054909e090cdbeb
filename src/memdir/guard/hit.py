"""The internal record a detector produces before findings are resolved and reported."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PRIO_ASSIGN", "PRIO_LABEL", "PRIO_SHAPE", "PRIO_VENDOR", "Finding", "Hit"]

# Lower wins when two detectors claim overlapping text: a vendor-specific token format says
# more than "some URL with a password" which says more than "some secret-named key", which
# says more than a label in prose or a value found on the line after its key.
PRIO_VENDOR = 0
PRIO_SHAPE = 1
PRIO_ASSIGN = 2
PRIO_LABEL = 3


@dataclass(frozen=True, slots=True)
class Finding:
    """One suspected credential: what kind it looks like and on which 1-based line.

    Deliberately carries no offsets and no text, so a finding can be logged, shown or raised
    without ever leaking any part of the value.
    """

    kind: str
    line: int


@dataclass(frozen=True, slots=True)
class Hit:
    """A detector's claim that text[start:end] is a secret value of the given kind."""

    start: int
    end: int
    kind: str
    priority: int

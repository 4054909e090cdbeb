"""What a query's arguments must be, and what a note's recalls add to its score."""

from __future__ import annotations

import math

from memdir.core.vocab import SearchMethod, SearchMode, parse_choice
from memdir.errors import InvalidInput
from memdir.index.query import AnalysedQuery, analyse

__all__ = ["USAGE_MAX_BONUS", "USAGE_STEP", "checked_query", "usage_bonus"]

#: Score added per natural-log unit of recalls, and its ceiling (reached at ~22,000 uses).
USAGE_STEP = 0.00002
USAGE_MAX_BONUS = 0.0002


def checked_query(
    query: str, limit: int, mode: SearchMode | str, method: SearchMethod | str
) -> tuple[AnalysedQuery, SearchMethod]:
    """The query analysed for `mode`, and the method; InvalidInput for bad arguments."""
    chosen_mode = parse_choice(SearchMode, mode, "mode")
    chosen_method = parse_choice(SearchMethod, method, "method")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidInput("limit must be a positive integer")
    if not isinstance(query, str):
        raise InvalidInput("query must be a string")
    return analyse(query, chosen_mode), chosen_method


def usage_bonus(uses: int) -> float:
    """What `uses` recalls add to a score: logarithmic, at most USAGE_MAX_BONUS."""
    return min(USAGE_STEP * math.log1p(max(uses, 0)), USAGE_MAX_BONUS)

"""The search tools: `memory_search` (summaries and snippets) and `memory_retrieve` (passages).

Private notes are never indexed, so never found; scope, type and tags filter inside the
search. `method` says how the query matched (hybrid, or lexical while vectors are behind).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from memdir import Memory
from memdir.core import AccessLevel
from memdir.core.vocab import SearchMethod
from memdir.mcp.models import ChunkOut, RetrieveOut, SearchHitOut, SearchOut
from memdir.mcp.tools.arguments import Limit, Mode, ScopeArg, TypeArg
from memdir.mcp.tools.record import READS, Tool, caller
from memdir.mcp.tools.visibility import warnings_of

__all__ = ["RETRIEVE", "SEARCH", "memory_retrieve", "memory_search"]


def memory_search(
    memory: Memory,
    query: Annotated[str, Field(description="Words to look for (any language).")],
    mode: Annotated[Mode, Field(description="any word, all words, or the phrase")] = "any",
    scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
    type: Annotated[TypeArg | None, Field(description="only notes of this type")] = None,
    tags: Annotated[list[str] | None, Field(description="only notes with all these")] = None,
    limit: Limit = 10,
) -> SearchOut:
    where = caller().scope_for(scope)
    index = memory.index
    # Private notes are never indexed; scope, type and tags filter inside the search.
    with warnings_of(memory) as warnings, index.observing(index.current_progress()) as report:
        hits = memory.search(query, limit=limit, mode=mode, scope=where, type=type, tags=tags)
    out = [SearchHitOut.of(hit) for hit in hits]
    if not out:
        hint = "nothing matched: try other words, synonyms or the other language, or mode any"
    elif hits[0].weak:
        hint = (
            "no good match: memory likely does not hold this; these closest notes may be "
            "unrelated (try other words before relying on them)"
        )
    else:
        hint = "open a note with memory_read(id), or get matching passages with memory_retrieve"
    method = report.method or SearchMethod.LEXICAL
    return SearchOut(hits=out, hint=hint, method=method.value, warnings=warnings)


SEARCH = Tool(
    "memory_search",
    memory_search,
    description=(
        "Search the long-term memory notes of this project and user. Returns summaries, "
        "snippets and ids only (cheap): open a promising note with memory_read, or fetch "
        "matching passages with memory_retrieve. Search before writing a note, and try "
        "synonyms or the user's other language when nothing matches. `method` says how it "
        "matched: hybrid (words and meaning) or lexical (words only, e.g. while vectors are "
        "still being computed: a warning then says how far they are)."
    ),
    annotations=READS,
    access=AccessLevel.READ,
)


def memory_retrieve(
    memory: Memory,
    query: Annotated[str, Field(description="Words to look for (any language).")],
    mode: Annotated[Mode, Field(description="any word, all words, or the phrase")] = "any",
    scope: Annotated[ScopeArg | None, Field(description="project or user notes")] = None,
    limit: Limit = 10,
) -> RetrieveOut:
    where = caller().scope_for(scope)
    index = memory.index
    with warnings_of(memory) as warnings, index.observing(index.current_progress()) as report:
        chunks = index.retrieve(query, limit=limit, mode=mode, scope=where)
    method = report.method or SearchMethod.LEXICAL
    return RetrieveOut(
        chunks=[ChunkOut.of(c) for c in chunks], method=method.value, warnings=warnings
    )


RETRIEVE = Tool(
    "memory_retrieve",
    memory_retrieve,
    description=(
        "Passages (chunks) of notes best matching a query, each with its note id, revision, "
        "chunk hash, byte offsets, score and source. Use when snippets are not enough but "
        "whole notes would be too much."
    ),
    annotations=READS,
    access=AccessLevel.READ,
)

"""The `memory_ask` tool (§10): a grounded answer from the notes, under any read access.

This module holds its handler, its record and its output model. Private notes are never
indexed, so never sent to the model or cited; the grant's scope limits the notes asked.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from memdir import Answer, AnswerStatus, Memory
from memdir.answer import MAX_QUESTION_CHARS
from memdir.core import AccessLevel, Scope, choices
from memdir.mcp.tools.record import Tool, caller

__all__ = ["ASK", "AskOut", "memory_ask"]

_HINTS = {
    AnswerStatus.ANSWERED: "each claim cites its passage: open one with memory_read(id)",
    AnswerStatus.INSUFFICIENT_EVIDENCE: (
        "the notes do not answer this: say so rather than guess, or try memory_search "
        "with other words"
    ),
    AnswerStatus.REFUSED: ("no checked answer: read the passages yourself with memory_retrieve"),
}


class CitationOut(BaseModel):
    """A cited passage: bytes `start`..`end` of note `id`'s file at `revision`."""

    id: str
    revision: str
    start: int
    end: int


class ClaimOut(BaseModel):
    """One statement of the answer and the passages it rests on."""

    text: str
    citations: list[CitationOut]


class AskOut(BaseModel):
    """A grounded answer: its claims and their citations, or why there is none."""

    status: str = Field(description="answered, insufficient_evidence or refused")
    text: str
    claims: list[ClaimOut]
    chunks_sent: int = Field(description="passages sent to the model (0: none was asked)")
    model: str | None
    reason: str | None
    hint: str

    @classmethod
    def of(cls, answer: Answer) -> AskOut:
        return cls(
            status=answer.status.value,
            text=answer.text,
            claims=[
                ClaimOut(
                    text=claim.text,
                    citations=[
                        CitationOut(id=c.note_id, revision=c.revision, start=c.start, end=c.end)
                        for c in claim.citations
                    ],
                )
                for claim in answer.claims
            ],
            chunks_sent=answer.chunks_sent,
            model=answer.model,
            reason=answer.reason,
            hint=_HINTS[answer.status],
        )


def memory_ask(
    memory: Memory,
    question: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_QUESTION_CHARS,
            description="The question, in the user's words.",
        ),
    ],
    scope: Annotated[
        str | None,
        Field(
            json_schema_extra={"enum": list(choices(Scope))},
            description="project or user notes",
        ),
    ] = None,
) -> AskOut:
    answer = memory.ask(question, scope=caller().scope_for(scope))
    return AskOut.of(answer)


ASK = Tool(
    "memory_ask",
    memory_ask,
    description=(
        "Answer a question from the memory notes, grounded: the passages found for it (and "
        "nothing else) go to the user's configured model as untrusted data, and the answer is "
        "accepted only if every claim cites a passage that was sent (note id, revision, byte "
        "offsets). `status`: answered, insufficient_evidence (no relevant note, so no model "
        "was asked; or the model found no answer) or refused (the model's answer failed the "
        "checks). Check a claim with memory_read on its cited id."
    ),
    # Reads notes only, but asks a model outside this machine, and answers vary.
    annotations=ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True
    ),
    access=AccessLevel.READ,
)

"""The `memory_ask` tool (§10): a grounded answer from the notes, under any read access.

Registered with the other memory tools (`memdir.mcp.tools`); this module holds its
function, description and output model. Private notes are never indexed, so never
sent to the model or cited; the grant's scope limits the notes asked.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from memdir.answer import MAX_QUESTION_CHARS
from memdir.answer.check import Answer, AnswerStatus
from memdir.core import Scope, choices
from memdir.errors import Refused
from memdir.mcp.access import CURRENT
from memdir.memory import Memory

__all__ = ["ASK_ANNOTATIONS", "ASK_DESCRIPTION", "AskOut", "AskTool"]

ASK_DESCRIPTION = (
    "Answer a question from the memory notes, grounded: the passages found for it (and "
    "nothing else) go to the user's configured model as untrusted data, and the answer is "
    "accepted only if every claim cites a passage that was sent (note id, revision, byte "
    "offsets). `status`: answered, insufficient_evidence (no relevant note, so no model "
    "was asked; or the model found no answer) or refused (the model's answer failed the "
    "checks). Check a claim with memory_read on its cited id."
)
#: Reads notes only, but asks a model outside this machine, and answers vary.
ASK_ANNOTATIONS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)
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


class AskTool:
    """`memory_ask`, bound to the server's `Memory`."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def memory_ask(
        self,
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
        access = CURRENT.get()
        if access is None:  # the server sets it before every dispatch; refuse if it did not
            raise Refused("no access was resolved for this call")
        answer = self.memory.ask(question, scope=access.scope_for(scope))
        return AskOut.of(answer)

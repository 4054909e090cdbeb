"""Grounded answers (§10): retrieve, gate, ask the `[llm]` model, check, audit.

With no evidence (`memdir.answer.select_evidence`) the answer is `insufficient_evidence`
and no model is called, configured or not. Otherwise only the question and the chosen
chunks are sent (`memdir.answer.build_messages`) and the answer is accepted only if
`memdir.answer.check_answer` finds every claim cited. Each ask is audited: the
question's SHA-256, the outcome, the number of chunks sent and the cited note ids —
never the question, the prompt or the answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memdir.answer import (
    MAX_QUESTION_CHARS,
    EvidenceGate,
    build_messages,
    check_answer,
    select_evidence,
)
from memdir.answer.check import Answer, AnswerStatus
from memdir.config import Settings
from memdir.core import Scope
from memdir.errors import InvalidInput
from memdir.retrieve.hits import Chunk
from memdir.store import AuditLog

if TYPE_CHECKING:
    from memdir.extract import ChatClient

__all__ = ["NO_EVIDENCE", "Asking"]

NO_EVIDENCE = "no note holds enough of the question's words; no model was asked"
#: The longest `detail` of an audit entry (`memdir.store.audit.MAX_VALUE_CHARS`).
_DETAIL_CHARS = 512


class Asking:
    """Answers questions from the notes that `retrieve` finds, with the model of `chat`."""

    def __init__(
        self,
        settings: Settings,
        audit: AuditLog,
        *,
        retrieve: Callable[[str, int, Scope | str | None], Sequence[Chunk]],
        chat: Callable[[], ChatClient],
        gate: EvidenceGate | None = None,
    ) -> None:
        self._settings = settings
        self._audit = audit
        self._retrieve = retrieve
        self._chat = chat
        self.gate = gate if gate is not None else EvidenceGate()

    def ask(self, question: str, *, scope: Scope | str | None = None) -> Answer:
        """§10: answer `question` from the notes of `scope` (None: both), every claim citing a
        chunk sent to the `[llm]` model; without evidence no model is called. Audited."""
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput("a question is needed")
        question = question.strip()
        if len(question) > MAX_QUESTION_CHARS:
            raise InvalidInput(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        chunks = self._retrieve(question, self.gate.candidates, scope)
        chosen = select_evidence(question, chunks, self.gate)
        if not chosen:
            answer = Answer(AnswerStatus.INSUFFICIENT_EVIDENCE, "", (), 0, None, NO_EVIDENCE)
        else:
            answer = self._answer(question, chosen)
        self._record(question, answer)
        return answer

    def _answer(self, question: str, chosen: Sequence[Chunk]) -> Answer:
        from memdir.extract import ChatUnavailable

        try:
            client = self._chat()
        except ChatUnavailable as exc:
            raise ChatUnavailable(
                f"notes hold evidence, but answering from it needs a model: {exc}", hint=exc.hint
            ) from None
        # ChatFailed (HTTP errors, timeouts, an unusable reply) is raised as it is.
        reply = client.complete(build_messages(question, chosen), json_mode=True)
        return check_answer(reply, chosen, self._settings.llm.model)

    def _record(self, question: str, answer: Answer) -> None:
        cited = ", ".join(answer.cited_ids)
        detail = f"cited: {cited}" if cited else None
        if detail is not None and len(detail) > _DETAIL_CHARS:
            detail = detail[: _DETAIL_CHARS - 1] + "…"
        self._audit.append(
            "ask",
            question_hash=hashlib.sha256(question.encode("utf-8")).hexdigest(),
            reason=answer.status.value,
            count=answer.chunks_sent,
            detail=detail,
        )

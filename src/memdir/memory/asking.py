"""Grounded answers (§10): retrieve, gate, ask the `[llm]` model, check, audit.

The retrieved chunks are joined by their notes' summaries (`memdir.answer.with_summaries`:
each read from the note's file at the retrieved revision, so that it can be cited). With
no evidence (`memdir.answer.select_evidence`) the answer is `insufficient_evidence`
and no model is called, configured or not. Otherwise only the question and the chosen
chunks are sent (`memdir.answer.build_messages`) and the answer is accepted only if
`memdir.answer.check_answer` finds every claim cited. Each ask is audited: the
question's SHA-256, the outcome, the number of chunks sent and the cited note ids —
never the question, the prompt or the answer.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memdir.answer import (
    MAX_QUESTION_CHARS,
    EvidenceGate,
    build_messages,
    check_answer,
    select_evidence,
    summaries_wanted,
    summary_passage,
    with_summaries,
)
from memdir.answer.check import Answer, AnswerStatus
from memdir.config import Settings
from memdir.core import Scope
from memdir.errors import InvalidInput, MemdirError
from memdir.retrieve.hits import Chunk
from memdir.store import AuditLog

if TYPE_CHECKING:
    from memdir.extract import ChatClient

__all__ = ["NO_EVIDENCE", "Asking"]

NO_EVIDENCE = "no note holds enough of the question's words; no model was asked"
#: The longest `detail` of an audit entry (`memdir.store.audit.MAX_VALUE_CHARS`).
_DETAIL_CHARS = 512
#: A note file larger than this is not read for its summary (the index holds smaller ones).
_MAX_FILE_BYTES = 16 << 20


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
        read: Callable[[Chunk], bytes | None] | None = None,
    ) -> None:
        self._settings = settings
        self._audit = audit
        self._retrieve = retrieve
        self._chat = chat
        self._read = read if read is not None else read_note_file
        self.gate = gate if gate is not None else EvidenceGate()

    def ask(self, question: str, *, scope: Scope | str | None = None) -> Answer:
        """§10: answer `question` from the notes of `scope` (None: both), every claim citing a
        chunk sent to the `[llm]` model; without evidence no model is called. Audited."""
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput("a question is needed")
        question = question.strip()
        if len(question) > MAX_QUESTION_CHARS:
            raise InvalidInput(f"the question is longer than {MAX_QUESTION_CHARS} characters")
        chosen = self.evidence(question, scope=scope)
        if not chosen:
            answer = Answer(AnswerStatus.INSUFFICIENT_EVIDENCE, "", (), 0, None, NO_EVIDENCE)
        else:
            answer = self._answer(question, chosen)
        self._record(question, answer)
        return answer

    def evidence(self, question: str, *, scope: Scope | str | None = None) -> tuple[Chunk, ...]:
        """The passages `ask` would send for `question` (best first), or () when there is
        no evidence: the retrieved chunks and their notes' summaries, gated. A summary is
        found in the bytes `read` gives for its note (default: `read_note_file`)."""
        chunks = self._retrieve(question, self.gate.candidates, scope)
        passages = []
        for chunk in summaries_wanted(chunks):
            try:
                data = self._read(chunk)
            except (OSError, MemdirError):  # unreadable now (locked, gone): no summary
                data = None
            passage = summary_passage(chunk, data) if data is not None else None
            if passage is not None:
                passages.append(passage)
        return select_evidence(question, with_summaries(chunks, passages), self.gate)

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


def read_note_file(chunk: Chunk) -> bytes | None:
    """The bytes of `chunk`'s note file as they are on disk, or None (gone, a link, not a
    regular file, too large, unreadable). A sealed (encrypted) file's bytes are not its
    revision's, so its summary is not found: such a store needs a `read` that unseals."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(chunk.path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_FILE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(_MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)

"""The model's answer checked as hostile: one JSON object of the answer's shape, every
claim citing a chunk that was sent, no credential — or no answer at all.

Nothing is repaired. Prose around the JSON, a missing or mistyped schema key, a key given
twice, a claim without citations, a citation naming a note, revision or byte range that
was not sent (within one sent chunk: ``chunk.start <= start < end <= chunk.end``), or text
the credential guard flags each refuse the whole answer, with a reason that names the
rule broken and never repeats the model's text. One bad citation refuses every claim: a
model that invents one source may have invented the rest, and a partial answer would
read as a whole one. A credential refuses rather than being redacted for the same reason:
the answer is already not what the notes say, and the user can read the cited notes.

What is tolerated, because real models add it and none of it can reach the user: a
Markdown code fence around the JSON, a leading ``<think>…</think>`` block, and keys
beyond the schema (``confidence``, ``reasoning``, ``notes``, ``sources``, a claim's
``quote``…) at any level. Those are dropped unread: only a claim's `text` (checked) and
its citations (checked) ever reach an `Answer`, so an extra key carries nothing to the
user, the audit log or a log line.
"""

from __future__ import annotations

import enum
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memdir.guard import scan_text
from memdir.retrieve.hits import Chunk

__all__ = [
    "MAX_CITATIONS",
    "MAX_CLAIMS",
    "MAX_CLAIM_CHARS",
    "Answer",
    "AnswerStatus",
    "Citation",
    "Claim",
    "check_answer",
]


class AnswerStatus(enum.StrEnum):
    """How `Memory.ask` ended (§10)."""

    #: Every claim cites a chunk that was sent to the model.
    ANSWERED = "answered"
    #: No relevant chunk was found (no model was called), or the model found no answer in them.
    INSUFFICIENT_EVIDENCE = "insufficient_evidence"
    #: The model's answer failed the checks (shape, citations, a credential): none is given.
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Citation:
    """Where a claim's support lies: UTF-8 byte offsets `start`..`end` in note `note_id`'s
    file at `revision` (within a chunk that was sent to the model)."""

    note_id: str
    revision: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement of an answer and the chunks it rests on (at least one)."""

    text: str
    citations: tuple[Citation, ...]


@dataclass(frozen=True, slots=True)
class Answer:
    """A grounded answer to a question (§10): `text` and `claims` only when `status` is
    answered; `reason` says why otherwise. `chunks_sent` counts the chunks the model saw
    (0: no model was called); `model` is the one that answered (None: none was asked)."""

    status: AnswerStatus
    text: str
    claims: tuple[Claim, ...]
    chunks_sent: int
    model: str | None
    reason: str | None = None

    @property
    def cited_ids(self) -> tuple[str, ...]:
        """The note ids the claims cite, in order of first citation."""
        return tuple(dict.fromkeys(c.note_id for claim in self.claims for c in claim.citations))


MAX_CLAIMS = 20
MAX_CLAIM_CHARS = 2000
MAX_CITATIONS = 10
_CLAIM_KEYS = frozenset({"text", "citations"})
_CITATION_KEYS = frozenset({"note_id", "revision", "start", "end"})
_KEPT_CONTROLS = frozenset("\n\t")
#: A Markdown code fence around the whole answer, as models add despite JSON mode.
_FENCE = re.compile(r"\A```(?:json)?[ \t]*\r?\n(.*)\r?\n[ \t]*```\Z", re.DOTALL | re.IGNORECASE)
#: The reasoning block a reasoning model (DeepSeek-R1, Qwen3…) may put before its answer.
_THINKING = re.compile(r"\A<think>.*?</think>\s*", re.DOTALL)


class _Refusal(Exception):
    """A rule the answer breaks (the message names it)."""


def check_answer(text: str, sent: Sequence[Chunk], model: str | None) -> Answer:
    """The answer that `text` (the model's reply to `sent`) makes once checked: answered,
    insufficient_evidence (the model said so, citing nothing) or refused (with why)."""
    try:
        return _checked(text, sent, model)
    except _Refusal as exc:
        return Answer(AnswerStatus.REFUSED, "", (), len(sent), model, f"{exc}; no answer is given")


def _checked(text: str, sent: Sequence[Chunk], model: str | None) -> Answer:
    data = _decoded(text)
    if not isinstance(data, dict):
        raise _Refusal("the model's answer is not one JSON object")
    _keys(data, "the answer", required=frozenset({"status"}))
    status = data["status"]
    claims = data.get("claims", [])
    if not isinstance(claims, list):
        raise _Refusal("the model's claims are not a list")
    if status == AnswerStatus.INSUFFICIENT_EVIDENCE:
        if claims:
            raise _Refusal("the model said insufficient_evidence but made claims")
        reason = f"the model found no answer in the {len(sent)} passages sent"
        return Answer(AnswerStatus.INSUFFICIENT_EVIDENCE, "", (), len(sent), model, reason)
    if status != AnswerStatus.ANSWERED:
        raise _Refusal("the model's status is neither answered nor insufficient_evidence")
    if not claims:
        raise _Refusal("the model's answer has no claims, so nothing in it is cited")
    if len(claims) > MAX_CLAIMS:
        raise _Refusal(f"the model made more than {MAX_CLAIMS} claims")
    checked = tuple(_claim(item, n, sent) for n, item in enumerate(claims))
    for n, claim in enumerate(checked):
        found = scan_text(claim.text)
        if found:
            kinds = ", ".join(dict.fromkeys(f.kind for f in found))
            raise _Refusal(f"claims[{n}] holds what looks like a credential ({kinds})")
    whole = " ".join(c.text for c in checked)
    return Answer(AnswerStatus.ANSWERED, whole, checked, len(sent), model)


def _keys(item: Mapping[str, Any], where: str, *, required: frozenset[str]) -> None:
    """`item` holds every `required` key; any other key is ignored (never read)."""
    missing = required - set(item)
    if missing:
        raise _Refusal(f"{where} lacks {', '.join(sorted(missing))}")


def _claim(item: Any, n: int, sent: Sequence[Chunk]) -> Claim:
    where = f"claims[{n}]"
    if not isinstance(item, dict):
        raise _Refusal(f"{where} is not an object")
    _keys(item, where, required=_CLAIM_KEYS)
    text, citations = item["text"], item["citations"]
    if not isinstance(text, str):
        raise _Refusal(f"{where}.text is not text")
    text = _clean(text)
    if not text:
        raise _Refusal(f"{where}.text is empty")
    if len(text) > MAX_CLAIM_CHARS:
        raise _Refusal(f"{where}.text is longer than {MAX_CLAIM_CHARS} characters")
    if not isinstance(citations, list) or not citations:
        raise _Refusal(f"{where} cites nothing")
    if len(citations) > MAX_CITATIONS:
        raise _Refusal(f"{where} has more than {MAX_CITATIONS} citations")
    cited = tuple(_citation(c, f"{where}.citations[{i}]", sent) for i, c in enumerate(citations))
    return Claim(text, tuple(dict.fromkeys(cited)))


def _citation(item: Any, where: str, sent: Sequence[Chunk]) -> Citation:
    if not isinstance(item, dict):
        raise _Refusal(f"{where} is not an object")
    _keys(item, where, required=_CITATION_KEYS)
    note_id, revision, start, end = (item[k] for k in ("note_id", "revision", "start", "end"))
    if not isinstance(note_id, str) or not isinstance(revision, str):
        raise _Refusal(f"{where}: note_id and revision must be text")
    if not _is_int(start) or not _is_int(end) or not 0 <= start < end:
        raise _Refusal(f"{where}: start and end must be byte offsets with start < end")
    for chunk in sent:
        if (
            chunk.note_id == note_id
            and chunk.revision == revision
            and chunk.start <= start
            and end <= chunk.end
        ):
            return Citation(note_id, revision, start, end)
    if not any(c.note_id == note_id for c in sent):
        raise _Refusal(f"{where} names a note that was not sent")
    if not any(c.note_id == note_id and c.revision == revision for c in sent):
        raise _Refusal(f"{where} names a revision of its note that was not sent")
    raise _Refusal(f"{where} names bytes outside every passage sent of its note")


def _decoded(text: str) -> Any:
    """The JSON value of the whole answer (inside a code fence, at most); _Refusal else."""
    if not isinstance(text, str):
        raise _Refusal("the model's answer is not text")
    stripped = _THINKING.sub("", text.strip(), count=1)
    fenced = _FENCE.match(stripped)
    try:
        return json.loads(fenced.group(1) if fenced else stripped, object_pairs_hook=_unique)
    except _Refusal:
        raise
    except (ValueError, RecursionError):
        raise _Refusal("the model's answer is not one JSON object") from None


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different: a key given twice means two readings
    of one answer (a parser keeps one, a person may see the other), so it is refused."""
    item = dict(pairs)
    if len(item) != len(pairs):
        raise _Refusal("the model's answer gives a key twice in one object")
    return item


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clean(text: str) -> str:
    """`text` trimmed, without control characters (a terminal escape, a NUL) but for
    line breaks and tabs."""
    kept = (
        ch for ch in text if ch in _KEPT_CONTROLS or unicodedata.category(ch) not in ("Cc", "Cf")
    )
    return "".join(kept).strip()

"""Grounded answers (§10): choosing the evidence, framing it for a model, checking the answer.

Pure functions over retrieved chunks and the model's answer text; no I/O (the
`memdir.memory.asking` collaborator retrieves, calls the model and writes the audit log)::

    evidence.with_summaries    the retrieved chunks joined by their notes' summaries
    evidence.select_evidence   the chunks worth sending, or none: insufficient evidence
    prompt.build_messages      the question and those chunks as untrusted JSON data
    check.check_answer         the model's answer parsed and every citation checked
"""

from memdir.answer.check import MAX_CLAIM_CHARS, MAX_CLAIMS, check_answer
from memdir.answer.evidence import (
    EvidenceGate,
    covered_words,
    select_evidence,
    summaries_wanted,
    summary_passage,
    with_summaries,
)
from memdir.answer.prompt import MAX_QUESTION_CHARS, build_messages

__all__ = [
    "MAX_CLAIMS",
    "MAX_CLAIM_CHARS",
    "MAX_QUESTION_CHARS",
    "EvidenceGate",
    "build_messages",
    "check_answer",
    "covered_words",
    "select_evidence",
    "summaries_wanted",
    "summary_passage",
    "with_summaries",
]

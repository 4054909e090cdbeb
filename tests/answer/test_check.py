"""`memdir.answer.check`: the model's answer against the chunks sent, hostile answers first."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.answer import MAX_CLAIMS, check_answer
from memdir.answer.check import AnswerStatus, Citation

from . import answered, chunk, cite

DEPLOY = chunk("deploys", "We deploy with the blue green strategy on staging.")
WIKI = chunk("checklist", "The release checklist lives in the wiki.", revision="b" * 64, start=7)
SENT = (DEPLOY, WIKI)
AWS_KEY = "AKIA" + "Q7W2E9R4T6Y8U1I3"


def refused(text: str) -> str:
    answer = check_answer(text, SENT, "small-model")
    assert answer.status is AnswerStatus.REFUSED
    assert answer.text == "" and answer.claims == ()
    assert answer.chunks_sent == 2 and answer.model == "small-model"
    assert answer.reason is not None and answer.reason.endswith("no answer is given")
    return answer.reason


def test_a_cited_answer_is_accepted() -> None:
    text = answered(
        ("Deploys are blue green.", [cite(DEPLOY)]),
        ("The checklist is in the wiki.", [cite(WIKI), cite(WIKI)]),
    )
    answer = check_answer(text, SENT, "small-model")
    assert answer.status is AnswerStatus.ANSWERED
    assert answer.text == "Deploys are blue green. The checklist is in the wiki."
    assert answer.claims[1].citations == (Citation("checklist", "b" * 64, 7, WIKI.end),)  # once
    assert answer.cited_ids == ("deploys", "checklist")
    assert answer.reason is None


def test_a_citation_within_a_sent_chunk_is_accepted() -> None:
    inner = cite(DEPLOY, start=DEPLOY.start + 3, end=DEPLOY.end - 1)
    answer = check_answer(answered(("Blue green.", [inner])), SENT, None)
    assert answer.status is AnswerStatus.ANSWERED
    assert answer.claims[0].citations[0].start == DEPLOY.start + 3


def test_a_fenced_answer_is_accepted() -> None:
    text = "```json\n" + answered(("Blue green.", [cite(DEPLOY)])) + "\n```"
    assert check_answer(text, SENT, None).status is AnswerStatus.ANSWERED


@pytest.mark.parametrize(
    ("citation", "why"),
    [
        (cite(DEPLOY, note_id="invented-note"), "names a note that was not sent"),
        (cite(DEPLOY, revision="f" * 64), "names a revision of its note that was not sent"),
        (cite(DEPLOY, revision=WIKI.revision), "names a revision of its note that was not sent"),
        (cite(DEPLOY, end=DEPLOY.end + 1), "names bytes outside every passage"),
        (cite(DEPLOY, start=DEPLOY.start - 1), "names bytes outside every passage"),
        (cite(WIKI, note_id="deploys"), "names a revision"),  # another chunk's place
        (cite(DEPLOY, start=DEPLOY.end), "start < end"),
        (cite(DEPLOY, start=-1), "start < end"),
        (cite(DEPLOY, start=True), "start < end"),
        (cite(DEPLOY, end="40"), "start < end"),
        (cite(DEPLOY, note_id=7), "must be text"),
        ({"note_id": "deploys"}, "lacks end, revision, start"),
        ("deploys", "is not an object"),
    ],
)
def test_a_bad_citation_refuses_the_whole_answer(citation: object, why: str) -> None:
    text = answered(("Deploys are blue green.", [cite(DEPLOY)]), ("More.", [citation]))  # type: ignore[list-item]
    reason = refused(text)
    assert why in reason
    assert "claims[1]" in reason  # the position, never the model's text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"status": "answered", "claims": []}', "has no claims"),
        ('{"status": "answered"}', "has no claims"),
        (answered(("Blue green.", [])), "cites nothing"),
        (
            json.dumps({"status": "answered", "claims": [{"text": "Blue green."}]}),
            "lacks citations",
        ),
        (answered(("   ", [cite(DEPLOY)])), "text is empty"),
        ('{"status": "answered", "status": "insufficient_evidence"}', "gives a key twice"),
        ('{"claims": []}', "lacks status"),
        ('{"status": "maybe", "claims": []}', "neither answered nor"),
        ('{"status": "insufficient_evidence", "claims": "none"}', "not a list"),
        ("not json at all", "not one JSON object"),
        ('{"status": "answered", "claims": [', "not one JSON object"),
        ("[1, 2]", "not one JSON object"),
        ('Sure! Here is the answer: {"status": "answered", "claims": []}', "not one JSON object"),
        (answered(("Blue green.", [cite(DEPLOY)])) + "\nHope this helps!", "not one JSON object"),
        ("[" * 100_000, "not one JSON object"),
    ],
)
def test_a_malformed_answer_is_refused(text: str, why: str) -> None:
    assert why in refused(text)


def test_too_many_claims_or_citations_are_refused() -> None:
    many = [("Blue green.", [cite(DEPLOY)])] * (MAX_CLAIMS + 1)
    assert "more than" in refused(answered(*many))
    assert "more than 10 citations" in refused(answered(("Blue green.", [cite(DEPLOY)] * 11)))
    assert "longer than" in refused(answered(("x" * 2001, [cite(DEPLOY)])))


def test_an_answer_holding_a_credential_is_refused_without_repeating_it() -> None:
    text = answered(("Deploys are blue green.", [cite(DEPLOY)]), (f"Key: {AWS_KEY}", [cite(WIKI)]))
    reason = refused(text)
    assert "credential" in reason and "claims[1]" in reason
    assert AWS_KEY not in reason


def test_the_model_saying_insufficient_evidence_is_no_answer() -> None:
    answer = check_answer('{"status": "insufficient_evidence", "claims": []}', SENT, "m")
    assert answer.status is AnswerStatus.INSUFFICIENT_EVIDENCE
    assert answer.claims == () and answer.chunks_sent == 2
    assert answer.reason == "the model found no answer in the 2 passages sent"
    bare = check_answer('{"status": "insufficient_evidence"}', SENT, "m")
    assert bare.status is AnswerStatus.INSUFFICIENT_EVIDENCE
    sneaky = '{"status": "insufficient_evidence", "claims": [{"text": "x", "citations": []}]}'
    assert "made claims" in refused(sneaky)


def test_control_characters_are_dropped_from_claims() -> None:
    text = answered(("Blue\x1b[31m green\u202e.\x00", [cite(DEPLOY)]))
    answer = check_answer(text, SENT, None)
    assert answer.text == "Blue[31m green."


# -- properties -------------------------------------------------------------------------------


@given(st.text(max_size=300))
def test_any_text_is_answered_insufficient_or_refused_never_raises(text: str) -> None:
    answer = check_answer(text, SENT, None)
    assert answer.status in set(AnswerStatus)
    if answer.status is not AnswerStatus.REFUSED:  # only JSON of the exact shape gets here
        assert json.loads(text.strip().removeprefix("```json").removesuffix("```"))


_CHOSEN = st.sampled_from(SENT)


@st.composite
def _inner_citation(draw: st.DrawFn) -> dict[str, object]:
    c = draw(_CHOSEN)
    start = draw(st.integers(c.start, c.end - 1))
    end = draw(st.integers(start + 1, c.end))
    return cite(c, start=start, end=end)


@given(st.lists(st.lists(_inner_citation(), min_size=1, max_size=4), min_size=1, max_size=5))
def test_citations_inside_sent_chunks_always_pass(claims: list[list[dict[str, object]]]) -> None:
    text = answered(*((f"claim {n}", cites) for n, cites in enumerate(claims)))  # type: ignore[misc]
    answer = check_answer(text, SENT, None)
    assert answer.status is AnswerStatus.ANSWERED
    for claim, cites in zip(answer.claims, claims, strict=True):
        assert {(c.note_id, c.start, c.end) for c in claim.citations} == {
            (c["note_id"], c["start"], c["end"]) for c in cites
        }


@given(
    st.lists(_inner_citation(), min_size=1, max_size=4),
    st.sampled_from(["note_id", "revision", "start", "end"]),
    st.integers(0, 3),
)
def test_one_citation_outside_the_sent_chunks_refuses_everything(
    good: list[dict[str, object]], field: str, which: int
) -> None:
    bad = dict(good[which % len(good)])
    if field == "note_id":
        bad["note_id"] = "not-sent"
    elif field == "revision":
        bad["revision"] = "0" * 64
    elif field == "start":
        bad["start"] = min(c.start for c in SENT) - 1
    else:
        bad["end"] = max(c.end for c in SENT) + 1
    text = answered(("fine", good), ("bad", [*good, bad]))
    assert check_answer(text, SENT, None).status is AnswerStatus.REFUSED

"""Tests for `guard/assign.py`: values assigned to secret-sounding names in config and prose."""

from __future__ import annotations

import pytest

from memdir.guard.assign import assignment_hits
from memdir.guard.hit import PRIO_ASSIGN, Hit

from .corpus import GH_PAT, PW_DB, PW_ENV


@pytest.mark.parametrize(
    "text",
    [f"DB_PASSWORD={PW_ENV}", f"Das Passwort ist {PW_DB}", f'password: "{PW_DB}"'],
)
def test_the_hit_covers_exactly_the_assigned_value(text: str) -> None:
    (hit,) = assignment_hits(text)
    assert hit.kind == "password assignment"
    assert hit.priority == PRIO_ASSIGN
    assert text[hit.start : hit.end] in (PW_ENV, PW_DB)


def test_a_token_name_labels_the_hit() -> None:
    text = f"token: {GH_PAT}"
    assert list(assignment_hits(text)) == [Hit(7, 7 + len(GH_PAT), "token assignment", 2)]


@pytest.mark.parametrize(
    "text",
    [
        "password = ${DB_PASSWORD}",
        "the password is hard-coded",
        "Token: n/a",
        "max_tokens=800",
        "",
    ],
)
def test_references_and_prose_are_not_assignments(text: str) -> None:
    assert list(assignment_hits(text)) == []


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('db_password = "Cielo.Kedi26"', "Cielo.Kedi26"),  # quoted: a string, not obj.attr
        ("DB_PASS=Tanne.Berg77", "Tanne.Berg77"),  # typed: a capital and a digit
        ("passphrase: tundra violet marble cactus", "tundra violet marble cactus"),
    ],
)
def test_dotted_and_spaced_literals_are_values(text: str, value: str) -> None:
    (hit,) = assignment_hits(text)
    assert text[hit.start : hit.end] == value


@pytest.mark.parametrize(
    "text",
    ["password = self.pw2", "password = Config.DB_PASSWORD", "passphrase: ask the infra team"],
)
def test_attributes_and_sentences_are_not_values(text: str) -> None:
    assert list(assignment_hits(text)) == []

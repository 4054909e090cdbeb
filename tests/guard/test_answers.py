"""Security-question answers, keypad codes, safe numbers and command-line passwords."""

from __future__ import annotations

import pytest

from memdir.guard import scan_text


@pytest.mark.parametrize(
    "text",
    [
        "Security question for the bank — mother's maiden name: Pemberton",
        "Контрольный вопрос — девичья фамилия матери: Белоусова",
        "密保问题——母亲的娘家姓：欧阳",
        "Mia: *691342#",
        "Haustür unten: 61420* drücken, dann klingeln.",
        "倉庫の扉の暗証番号は*64293#",
        "Cofre do quarto: 8010",
        "Tresor im Büro: Kombination 07766, nur für Notfälle.",
        "The safe in the back office opens with 828978 (turn left first).",
        "command: redis-server --requirepass Heron.Feta42",
    ],
)
def test_found(text: str) -> None:
    assert scan_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Security question: what was the name of your first pet?",
        "Mother's maiden name: required",
        "Sicherheitsfrage: Lieblingsfarbe",
        "Dial *100# to check your balance.",
        "Founded in 2019* (*approximate).",
        "Safe mode: 2 retries, then 30 s.",
        "The safe holds 1200 documents.",
        "Thread-safe queue: 4096.",
        "Safe harbor agreement: 2015.",
        "Coffre : 2019.",
        "redis-server --requirepass $REDIS_PASSWORD",
        "x = 1234*y + 7",
        "Preis: ab 1299* (*inkl. MwSt.)",
        "Jetzt nur 4999* EUR",
        "Angebot 1499*\n* solange der Vorrat reicht",
    ],
)
def test_passed(text: str) -> None:
    assert scan_text(text) == []

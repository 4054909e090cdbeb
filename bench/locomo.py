"""Loading the LoCoMo development set (../shared/bench/) into notes, per its README's protocol.

The data stays where it is: this module reads it, it is never copied into the repo.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "locomo-dev.json"
_DIA = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    created_ms: int


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: list[Turn]
    questions: list[Question]


def _date_ms(raw: str) -> int:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return int(datetime.strptime(raw.strip(), fmt).timestamp() * 1000)
        except ValueError:
            continue
    return 0


def _evidence(raw: list[str], known: set[str]) -> frozenset[str]:
    ids: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,]", item):
            part = part.strip().replace("D:", "D")
            m = _DIA.fullmatch(part)
            if m:
                ids.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return frozenset(i for i in ids if i in known)


def load(path: Path = DATA) -> list[Conversation]:
    """Every conversation with its turns and its category 1–4 questions that have evidence."""
    out = []
    for record in json.loads(path.read_text("utf-8")):
        conv = record["conversation"]
        turns: list[Turn] = []
        n = 1
        while f"session_{n}" in conv:
            created = _date_ms(conv.get(f"session_{n}_date_time", ""))
            for turn in conv[f"session_{n}"]:
                text = turn["text"]
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                m = _DIA.fullmatch(turn["dia_id"])
                dia = f"D{int(m.group(1))}:{int(m.group(2))}" if m else turn["dia_id"]
                turns.append(Turn(dia, n, turn["speaker"], text, created))
            n += 1
        known = {t.dia_id for t in turns}
        questions = []
        for qa in record["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            evidence = _evidence(qa.get("evidence", []), known)
            if evidence:
                questions.append(Question(qa["question"], evidence, int(qa["category"])))
        out.append(Conversation(record["sample_id"], turns, questions))
    return out


def first_sentence(text: str, limit: int = 120) -> str:
    """A one-line summary: the first sentence, at most `limit` characters."""
    line = " ".join(text.split())
    m = re.search(r"(?<=[.!?])\s", line)
    head = line[: m.start()] if m else line
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"

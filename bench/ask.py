"""How often `Memory.ask`'s evidence gate says `insufficient_evidence`, on the LoCoMo dev set.

Run: python bench/ask.py [--level turn|session] [--work DIR]

No model is called: this measures only the gate (`memdir.answer.evidence`, through
`Memory.answers.evidence` as `ask` runs it), which decides from the retrieved chunks and
their notes' summaries alone whether a question has evidence at all. Asked
against each conversation's own notes (one note per turn, or per session):

- answerable: its category 1–4 questions (the evidence is in the store) — the share
  wrongly gated as insufficient, and the share whose evidence turns are among the
  chunks that would be sent;
- unanswerable: questions of the *other* conversations (about people this store never
  mentions), off-topic questions written here (facts, code, ops) and gibberish — the
  share wrongly let through to a model;
- category 5 (adversarial: a true-sounding premise about the wrong person) is printed
  apart: the gate cannot tell these, the model's cited answer has to.

The data stays in ../shared/bench (never copied here); the work dir keeps the indexes.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import DATA, load
from memdir import Memory
from memdir.answer import EvidenceGate
from retrieval import write_notes

OFF_TOPIC = [
    "What is the capital of Australia?",
    "How many moons does Jupiter have?",
    "What is the boiling point of tungsten?",
    "Who wrote the Critique of Pure Reason?",
    "What port does the PostgreSQL replica listen on?",
    "Which version of numpy does the build pin?",
    "How do I rotate the TLS certificate on the staging cluster?",
    "What is the retry policy of the sync client?",
    "Which flag disables the FTS5 tokenizer in the importer?",
    "What was decided about the Kubernetes ingress controller?",
    "Where is the release checklist for the Android app?",
    "What did the team decide about the GraphQL schema migration?",
    "Which AWS region hosts the billing database?",
    "What is the SHA-256 of the installer?",
    "How do I configure the Rust borrow checker?",
    "What is the derivative of arctan x?",
    "Who won the 1998 FIFA World Cup final?",
    "What is the atomic number of molybdenum?",
    "How tall is Mount Kilimanjaro?",
    "Which compiler flags does the firmware build use?",
    "What is the default timeout of the webhook dispatcher?",
    "What did the auditor say about the SOC 2 controls?",
    "How is the Terraform state locked?",
    "Which Python version does the CI matrix drop?",
    "What is the airspeed of an unladen swallow?",
    "What is the population of Reykjavik?",
    "Why did the cron job for invoice exports fail?",
    "What is the name of the VPN gateway in Frankfurt?",
    "Which cipher suite does the load balancer prefer?",
    "What is the melting point of gallium?",
]
GIBBERISH = [
    "xqzv blorft wimble?",
    "asdf qwer zxcv",
    "florp the snargle quux",
    "zzzz",
    "Wibbly glonk frazzle the mimsy borogove?",
    "qwertyuiop asdfghjkl",
    "Plonk vrex tiddle morp?",
    "kjhgf lkjhg",
    "Snorfle jibber quonk?",
    "blee blah bloo",
]


def _category5(sample_id: str) -> list[str]:
    for record in json.loads(DATA.read_text("utf-8")):
        if record["sample_id"] == sample_id:
            return [str(qa["question"]) for qa in record["qa"] if qa.get("category") == 5]
    return []


def _ask_gate(memory: Memory, gate: EvidenceGate, question: str) -> tuple[bool, list[str]]:
    # `ask`'s own path: retrieved chunks, their notes' summaries, the gate.
    memory.answers.gate = gate
    chosen = memory.answers.evidence(question)
    return bool(chosen), [c.note_id for c in chosen]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f} % ({part}/{whole})" if whole else "–"


def run(level: str, work: Path, gate: EvidenceGate, *, cross_per_conv: int = 60) -> None:
    convs = load()
    rng = random.Random(16)
    answerable = gated = found = 0
    per_cat: dict[int, list[int]] = {}
    cross = cross_passed = 0
    off = off_passed = 0
    adv = adv_passed = 0
    for conv in convs:
        project = work / level / conv.sample_id / "project"
        home = work / level / conv.sample_id / "home"
        shutil.rmtree(project / "MEMORY", ignore_errors=True)
        holds = write_notes(conv, project / "MEMORY", level)
        memory = Memory.open(project, home=home)
        memory.index.reindex()
        for q in conv.questions:
            passed, ids = _ask_gate(memory, gate, q.text)
            answerable += 1
            row = per_cat.setdefault(q.category, [0, 0])
            row[0] += 1
            if not passed:
                gated += 1
                row[1] += 1
            if any(holds.get(i, set()) & q.evidence for i in ids):
                found += 1
        others = [q.text for c in convs if c is not conv for q in c.questions]
        for text in rng.sample(others, min(cross_per_conv, len(others))):
            cross += 1
            cross_passed += _ask_gate(memory, gate, text)[0]
        for text in OFF_TOPIC + GIBBERISH:
            off += 1
            off_passed += _ask_gate(memory, gate, text)[0]
        for text in _category5(conv.sample_id):
            adv += 1
            adv_passed += _ask_gate(memory, gate, text)[0]
        memory.close()
    print(f"\n{level} level, gate {gate}")
    print(f"answerable (cat 1–4) gated insufficient: {_pct(gated, answerable)}")
    for cat in sorted(per_cat):
        total, bad = per_cat[cat]
        print(f"  category {cat}: {_pct(bad, total)}")
    print(f"answerable with an evidence turn among the chunks sent: {_pct(found, answerable)}")
    print(f"other conversations' questions let through: {_pct(cross_passed, cross)}")
    print(f"off-topic and gibberish let through: {_pct(off_passed, off)}")
    print(f"category 5 (adversarial, apart) let through: {_pct(adv_passed, adv)}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", choices=("turn", "session", "both"), default="turn")
    parser.add_argument("--work", type=Path, default=Path("/tmp/memdir-bench-ask"))
    args = parser.parse_args(argv)
    levels = ("turn", "session") if args.level == "both" else (args.level,)
    for level in levels:
        run(level, args.work, EvidenceGate())


if __name__ == "__main__":
    main()

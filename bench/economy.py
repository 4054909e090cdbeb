"""What memory costs an agent's context: the relevance floor on foreign questions, and
per-message recall (§4.2) on both of its paths, beside plain SQLite FTS5, on the LoCoMo
development set.

Run: python bench/economy.py [--work DIR] [--foreign-every N]

One store per conversation (turn level, as bench/retrieval.py writes it; its work dir
and so its vectors are shared). Its own questions (categories 1–4) are answerable; the
other conversations' questions are foreign: their answers are not in this store.

Search floor: R@5 of memdir's hybrid search on the answerable questions, without the
floor and with it (a result marked weak counts as empty), and the share of foreign
questions whose result is not marked weak (target ≤ 10 %, for ≤ 1 point of R@5).
FTS5 (porter, OR of the words, bm25) has no floor: the share of foreign questions it
answers with anything is printed beside.

Recall: each question sent as a user message (`Memory.recall`, empty history), on the
lexical path a fresh process takes and on the warm path of a long-lived host (vectors
loaded: `embed_in_background`). Printed: evidence attached (share of answerable messages
whose attached notes hold some evidence turn), precision (attached notes that are
evidence), characters attached per message (the whole block, over every answerable
message) and the share of foreign messages that attach anything. The FTS5 row attaches
its top 3 notes to every message.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import Conversation, Question, load
from memdir import Memory
from retrieval import fts5_baseline, score, write_notes


@dataclass
class Tally:
    """Counts of one row of the recall table."""

    messages: int = 0
    with_evidence: int = 0
    attached: int = 0
    evidence_notes: int = 0
    chars: int = 0
    foreign: int = 0
    foreign_attaching: int = 0
    seconds: list[float] = field(default_factory=list)

    def own(self, ids: list[str], block: str, question: Question, holds: dict[str, set[str]]):
        hit = [i for i in ids if holds.get(i, set()) & question.evidence]
        self.messages += 1
        self.with_evidence += bool(hit)
        self.attached += len(ids)
        self.evidence_notes += len(hit)
        self.chars += len(block)

    def row(self, name: str) -> str:
        ms = sorted(self.seconds)
        p95 = 1000 * ms[int(len(ms) * 0.95) - 1] if ms else 0.0
        return (
            f"{name:<22}{100 * self.with_evidence / max(self.messages, 1):10.1f}"
            f"{100 * self.evidence_notes / max(self.attached, 1):11.1f}"
            f"{self.attached / max(self.messages, 1):9.2f}"
            f"{self.chars / max(self.messages, 1):9.0f}"
            f"{100 * self.foreign_attaching / max(self.foreign, 1):10.1f}{p95:9.1f}"
        )


def _open(conv: Conversation, work: Path) -> tuple[Memory, dict[str, set[str]], dict[str, str]]:
    project = work / "turn" / conv.sample_id / "project"
    home = work / "turn" / conv.sample_id / "home"
    shutil.rmtree(project / "MEMORY", ignore_errors=True)  # the id stays, so the vectors
    shutil.rmtree(home / "memory-usage", ignore_errors=True)  # recall counts from zero
    holds = write_notes(conv, project / "MEMORY", "turn")
    texts = {
        nid: (project / "MEMORY" / f"{nid}.md").read_text("utf-8").split("---\n", 2)[2]
        for nid in holds
    }
    memory = Memory.open(project, home=home)
    memory.index.reindex()
    return memory, holds, texts


def _foreign(convs: list[Conversation], conv: Conversation, every: int) -> list[Question]:
    others = [q for c in convs if c.sample_id != conv.sample_id for q in c.questions]
    return others[::every]


def floor(convs: list[Conversation], work: Path, every: int) -> None:
    rows: dict[str, list[float]] = {"plain": [], "floored": [], "fts5": []}
    foreign = {"memdir": 0, "fts5": 0}
    asked = 0
    per_conv: list[str] = []
    for conv in convs:
        memory, holds, texts = _open(conv, work)
        fts = fts5_baseline(texts)
        mine = {"plain": [], "floored": [], "foreign": 0, "asked": 0}
        for q in conv.questions:
            hits = memory.search(q.text, limit=10)
            ids = [h.note_id for h in hits]
            r5 = score(ids, q.evidence, holds)["R@5"]
            strong = bool(hits) and not hits[0].weak
            rows["plain"].append(r5)
            rows["floored"].append(r5 if strong else 0.0)
            rows["fts5"].append(score(fts(q.text), q.evidence, holds)["R@5"])
            mine["plain"].append(r5)
            mine["floored"].append(r5 if strong else 0.0)
        for q in _foreign(convs, conv, every):
            hits = memory.search(q.text, limit=10)
            strong = bool(hits) and not hits[0].weak
            foreign["memdir"] += strong
            foreign["fts5"] += bool(fts(q.text))
            mine["foreign"] += strong
            mine["asked"] += 1
            asked += 1
        per_conv.append(
            f"  {conv.sample_id}: R@5 {100 * statistics.fmean(mine['plain']):.1f} → "
            f"{100 * statistics.fmean(mine['floored']):.1f} with the floor; foreign questions "
            f"above it {100 * mine['foreign'] / max(mine['asked'], 1):.1f} %"
        )
        memory.close()
    n = len(rows["plain"])
    print(f"\nsearch floor — {n} answerable questions, {asked} foreign questions")
    print(f"{'':<22}{'R@5':>8}{'foreign answered %':>21}")
    print(f"{'fts5-porter':<22}{100 * statistics.fmean(rows['fts5']):8.1f}"
          f"{100 * foreign['fts5'] / asked:21.1f}")  # fmt: skip
    print(f"{'memdir, no floor':<22}{100 * statistics.fmean(rows['plain']):8.1f}{100.0:21.1f}")
    print(f"{'memdir, floor':<22}{100 * statistics.fmean(rows['floored']):8.1f}"
          f"{100 * foreign['memdir'] / asked:21.1f}")  # fmt: skip
    print("\n".join(per_conv))


def _wait_warm(memory: Memory) -> None:
    memory.index.embed_in_background()
    stores = memory.stores.chosen(None)
    memory.search("warm up", limit=1)  # opens and refreshes the index
    for _ in range(600):
        if memory.index.retriever.vectors_ready(stores):
            return
        time.sleep(0.1)
    raise SystemExit("the vectors did not become ready in 60 s")


def recall(convs: list[Conversation], work: Path, every: int) -> None:
    tallies = {"fts5 top 3": Tally(), "lexical (cold path)": Tally(), "warm (hybrid)": Tally()}
    for conv in convs:
        memory, holds, texts = _open(conv, work)
        fts = fts5_baseline(texts)
        foreign = _foreign(convs, conv, every)
        t = tallies["fts5 top 3"]
        for q in conv.questions:
            ids = fts(q.text)[:3]
            t.own(ids, "\n".join(texts[i] for i in ids), q, holds)
        t.foreign += len(foreign)
        t.foreign_attaching += sum(bool(fts(q.text)) for q in foreign)
        for name in ("lexical (cold path)", "warm (hybrid)"):
            t = tallies[name]
            if name.startswith("warm"):
                _wait_warm(memory)
            for q in conv.questions:
                started = time.perf_counter()
                found = memory.recall(q.text)
                t.seconds.append(time.perf_counter() - started)
                t.own(list(found.note_ids), found.block, q, holds)
            for q in foreign:
                t.foreign += 1
                t.foreign_attaching += bool(memory.recall(q.text).count)
        memory.close()
    n = tallies["fts5 top 3"].messages
    print(f"\nrecall — {n} answerable messages, {tallies['fts5 top 3'].foreign} foreign messages")
    print(
        f"{'path':<22}{'evidence%':>10}{'precision%':>11}{'notes':>9}{'chars':>9}"
        f"{'foreign%':>10}{'p95 ms':>9}"
    )
    for name, t in tallies.items():
        print(t.row(name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/memdir-bench-retrieval"))
    parser.add_argument(
        "--foreign-every", type=int, default=1, help="ask every Nth foreign question only"
    )
    parser.add_argument("--only", choices=["floor", "recall"], default=None)
    args = parser.parse_args()
    convs = load()
    if args.only != "recall":
        floor(convs, args.work, args.foreign_every)
    if args.only != "floor":
        recall(convs, args.work, args.foreign_every)


if __name__ == "__main__":
    main()

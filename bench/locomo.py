"""Loading the LoCoMo development set (../shared/bench/) into notes, per its README's protocol.

The data stays where it is: this module reads it, it is never copied into the repo.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

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


# --- ablation: each retrieval change on and off, leave-one-conversation-out -----------------
# Run: python bench/locomo.py --ablation [--work DIR]. Parameters of a change are picked
# on four conversations (best mean of R@5 and R@10) and reported on the fifth, rotating.
# Query vectors are cached in the work dir (keyed by embedder id and text hash); note
# vectors stay in each conversation's index, which the work dir keeps between runs.


class _Cached:
    """A SearchIndex (and its vector index) whose answers are memoised per question, so a
    parameter grid costs Python arithmetic, not SQL and matrix products."""

    def __init__(self, index: Any) -> None:
        self._index = index
        self._memo: dict[tuple[object, ...], Any] = {}

    def _get(self, key: tuple[object, ...], compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def lexical(self, match: str, limit: int, *args: Any) -> Any:
        return self._get(("lex", match, limit), lambda: self._index.lexical(match, limit, *args))

    def stored_terms(self, ids: Any) -> Any:
        wanted = tuple(sorted(set(ids)))
        have = self._memo.setdefault(("terms",), {})
        missing = [i for i in wanted if i not in have]
        if missing:
            have.update(self._index.stored_terms(missing))
        return {i: have[i] for i in wanted if i in have}

    def chunks(self, ids: Any) -> Any:
        wanted = tuple(sorted(set(ids)))
        have = self._memo.setdefault(("chunks",), {})
        missing = [i for i in wanted if i not in have]
        if missing:
            have.update(self._index.chunks(missing))
        return {i: have[i] for i in wanted if i in have}

    def keys(self, ids: Any) -> Any:
        wanted = set(ids)
        have = self._memo.setdefault(("keys",), {})
        missing = [i for i in wanted if i not in have]
        if missing:
            have.update(self._index.keys(missing))
        return {i: have[i] for i in wanted if i in have}

    def doc_freq(self, terms: Any) -> Any:
        wanted = tuple(sorted(set(terms)))
        return self._get(("df", wanted), lambda: self._index.doc_freq(wanted))

    def vector_index(self, embedder: str) -> Any:
        return self._get(
            ("vec", embedder), lambda: _CachedVectors(self._index.vector_index(embedder))
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


class _CachedVectors:
    def __init__(self, vectors: Any) -> None:
        self._v = vectors
        self.ids = vectors.ids
        self.matrix = vectors.matrix
        self._memo: dict[tuple[object, ...], Any] = {}

    def __len__(self) -> int:
        return len(self._v)

    def search(self, query: Any, k: int, allowed: Any = None, excluded: Any = None) -> Any:
        key = ("s", query.tobytes(), k)
        if key not in self._memo:
            self._memo[key] = self._v.search(query, k, allowed, excluded)
        return self._memo[key]

    def similarities(self, query: Any, ids: Any) -> Any:
        key = ("all", query.tobytes())
        if key not in self._memo:
            scores = self.matrix @ query
            self._memo[key] = dict(zip(self.ids.tolist(), scores.tolist(), strict=True))
        every = self._memo[key]
        return {i: every[i] for i in ids if i in every}


def _query_vectors(texts: list[str], embedder: Any, work: Path) -> dict[str, Any]:
    import numpy as np

    eid = embedder.info.id
    path = work / f"qvec-{hashlib.sha256(eid.encode()).hexdigest()[:16]}.npz"
    have: dict[str, Any] = dict(np.load(path)) if path.exists() else {}
    keyed = {t: hashlib.sha256(t.encode()).hexdigest() for t in texts}
    todo = [t for t in texts if keyed[t] not in have]
    for t in todo:
        have[keyed[t]] = np.asarray(embedder.embed_query(t), dtype=np.float32)
    if todo:
        np.savez(path, **have)
    return {t: have[keyed[t]] for t in texts}


def _prepare(conv: Conversation, work: Path) -> tuple[Any, Any, dict[str, set[str]], Any]:
    from memdir import Memory
    from retrieval import write_notes

    project = work / "turn" / conv.sample_id / "project"
    home = work / "turn" / conv.sample_id / "home"
    shutil.rmtree(project / "MEMORY", ignore_errors=True)  # keep the id, so the vectors
    holds = write_notes(conv, project / "MEMORY", "turn")
    memory = Memory.open(project, home=home)
    memory.index.reindex()
    store = memory.stores.chosen(None)[0]
    return memory, memory.index.retriever.index(store), holds, memory.index.retriever.embedder


Metrics = dict[str, float]
#: The recipe before issue 14 (the ablation's baseline) and the defaults fitted since.
_BEFORE_FIELDS: dict[str, Any] = {
    "cosine_weight": 0.10,
    "coverage_weight": 0.05,
    "date_weight": 0.0,
    "when_weight": 0.0,
    "context_coverage_weight": 0.0,
    "context_cosine_weight": 0.0,
}
_SHIPPED: dict[str, Any] = {}


def _before() -> Any:
    from memdir.retrieve.hybrid import FusionParams

    return FusionParams(**_BEFORE_FIELDS)


def _evaluate(
    conv_data: tuple[Any, list[Question], dict[str, set[str]], dict[str, Any], str],
    params: Any,
) -> list[Metrics]:
    from memdir.core.vocab import SearchMethod
    from memdir.index.query import analyse
    from memdir.retrieve.ranking import rank_chunks
    from retrieval import score

    index, questions, holds, qvecs, eid = conv_data
    out = []
    for q in questions:
        ranked = rank_chunks(
            index,
            analyse(q.text),
            limit=40,
            method=SearchMethod.HYBRID,
            query_vector=qvecs[q.text],
            embedder_id=eid,
            params=params,
        )
        ids = list(dict.fromkeys(r.row.note_id for r in ranked))[:10]
        out.append({**score(ids, q.evidence, holds), "cat": float(q.category)})
    return out


def _mean(rows: list[Metrics], key: str) -> float:
    return 100 * sum(r[key] for r in rows) / max(len(rows), 1)


def _objective(rows: list[Metrics]) -> float:
    return _mean(rows, "R@5") + _mean(rows, "R@10")


def ablation(work: Path) -> None:
    """Print the leave-one-conversation-out table of every change (see the module's end)."""
    import dataclasses
    import time as _time

    from memdir.retrieve.hybrid import FusionParams

    convs = load()
    data = []
    memories = []
    for conv in convs:
        memory, index, holds, embedder = _prepare(conv, work)
        memories.append(memory)
        qvecs = _query_vectors([q.text for q in conv.questions], embedder, work)
        data.append((_Cached(index), conv.questions, holds, qvecs, embedder.info.id))
    base = _before()
    shipped = FusionParams()
    _SHIPPED.update({f: getattr(shipped, f) for f in _BEFORE_FIELDS})
    grids: dict[str, list[dict[str, Any]]] = _grids()
    results: dict[tuple[str, int], list[Metrics]] = {}
    chosen: dict[tuple[str, int], dict[str, Any]] = {}
    cache: dict[tuple[tuple[tuple[str, Any], ...], int], list[Metrics]] = {}

    def run(change: dict[str, Any], i: int) -> list[Metrics]:
        key = (tuple(sorted(change.items())), i)
        if key not in cache:
            cache[key] = _evaluate(data[i], dataclasses.replace(base, **change))
        return cache[key]

    t0 = _time.perf_counter()
    for name, grid in grids.items():
        for held in range(len(data)):
            train = [i for i in range(len(data)) if i != held]
            best = max(
                grid,
                key=lambda g: _objective([m for i in train for m in run(g, i)]),
            )
            chosen[(name, held)] = best
            results[(name, held)] = run(best, held)
    names = list(grids)
    for held in range(len(data)):  # every change at once, each as chosen for this fold
        combined: dict[str, Any] = {}
        for name in names:
            combined.update(chosen[(name, held)])
        chosen[("all changes", held)] = combined
        results[("all changes", held)] = run(combined, held)
    t1 = _time.perf_counter()
    feats = [features(d) for d in data]
    for held in range(len(data)):  # the rerank's weights refined together on four
        train = [x for i in range(len(data)) if i != held for x in feats[i]]
        start = {f: chosen[("all changes", held)].get(f, getattr(base, f)) for f in FEATURES}
        chosen[("learned weights", held)] = fit(train, start)
        results[("learned weights", held)] = run(chosen[("learned weights", held)], held)
    fitted = _time.perf_counter() - t1
    for held in range(len(data)):  # fitted on all five: not a held-out figure
        chosen[("shipped defaults*", held)] = _SHIPPED
        results[("shipped defaults*", held)] = run(_SHIPPED, held)
    grids = {**grids, "all changes": [], "learned weights": [], "shipped defaults*": []}
    print(f"\nablation — leave-one-conversation-out ({_time.perf_counter() - t0:.0f} s)")
    cols = ["R@5", "R@10", "MRR@10"]
    header = f"{'change':<22}" + "".join(f"{c.sample_id:>20}" for c in convs) + f"{'mean':>20}"
    print(header)
    print(f"{'':<22}" + "".join(f"{'R@5 R@10 MRR':>20}" for _ in range(len(convs) + 1)))
    for name in grids:
        cells = []
        for held in range(len(data)):
            rows = results[(name, held)]
            cells.append(" ".join(f"{_mean(rows, c):.1f}" for c in cols))
        pooled = [m for held in range(len(data)) for m in results[(name, held)]]
        cells.append(" ".join(f"{_mean(pooled, c):.1f}" for c in cols))
        print(f"{name:<22}" + "".join(f"{c:>20}" for c in cells))
    print("\nall changes, by category (pooled over the held-out folds): R@5 R@10 MRR n")
    for cat in (1, 2, 3, 4):
        for name in ("baseline", "all changes", "learned weights"):
            rows = [m for h in range(len(data)) for m in results[(name, h)] if m["cat"] == cat]
            figures = " ".join(f"{_mean(rows, c):.1f}" for c in cols)
            print(f"  category {cat} {name:<12} {figures} {len(rows)}")
    print(f"(features and fitting: {fitted:.0f} s)")
    print("* the defaults in memdir.retrieve.hybrid, fitted on all five conversations")
    print("\nchosen on the other four conversations:")
    for name in grids:
        picks = [chosen[(name, held)] for held in range(len(data))]
        print(f"  {name}: " + "; ".join(str(p) for p in picks))
    for memory in memories:
        memory.close()


def _grids() -> dict[str, list[dict[str, Any]]]:
    """Each change with the values it may take (the first: off or the current default)."""
    import itertools

    def grid(**axes: list[Any]) -> list[dict[str, Any]]:
        names = list(axes)
        return [dict(zip(names, vals, strict=True)) for vals in itertools.product(*axes.values())]

    return {
        "baseline": [{}],
        "fusion weights": grid(
            vector_weight=[0.8, 1.0],
            cosine_weight=[0.45, 0.8, 1.2, 2.0, 4.0],
            coverage_weight=[0.1, 0.15, 0.25, 0.4, 0.8],
        ),
        "rrf k": grid(k=[30, 60, 100]),
        "depth": grid(lexical_depth=[50, 100, 200], vector_depth=[50, 100, 200]),
        "date window": grid(date_weight=[0.0, 0.02, 0.04, 0.08, 0.15]),
        "when: time words": grid(when_weight=[0.0, 0.01, 0.02, 0.04]),
        "session context": grid(
            context_coverage_weight=[0.0, 0.05, 0.1, 0.2],
            context_cosine_weight=[0.0, 0.2, 0.4, 0.8, 1.2],
        ),
    }


# --- learned weights: the rerank's features, fitted by coordinate ascent ---------------------

FEATURES = (
    "lexical_weight",
    "vector_weight",
    "cosine_weight",
    "coverage_weight",
    "phrase_weight",
    "date_weight",
    "when_weight",
    "context_coverage_weight",
    "context_cosine_weight",
)


def features(conv_data: Any) -> list[tuple[Any, Any]]:
    """Per question: (candidate × feature matrix, evidence share of each candidate), the
    features being what `rank_chunks` multiplies by each `FEATURES` weight."""
    import numpy as np

    from memdir.index.query import analyse
    from memdir.retrieve.dates import find_dates
    from memdir.retrieve.hybrid import (
        FusionParams,
        coverage,
        has_adjacent_pair,
        idf,
        session_context,
        timed,
    )

    index, questions, holds, qvecs, eid = conv_data
    p = FusionParams()
    vectors = index.vector_index(eid)
    out = []
    for q in questions:
        a = analyse(q.text)
        lex = index.lexical(a.match, p.lexical_depth) if a.match else []
        vec = vectors.search(qvecs[q.text], p.vector_depth)
        lr = {c: r for c, r in _rank_map(lex).items()}
        vr = {c: r for c, r in _rank_map(vec).items()}
        cands = sorted(set(lr) | set(vr))
        stored = index.stored_terms(cands)
        df, total = index.doc_freq(x for t in a.groups for x in t)
        weights = {
            t: idf(max(df.get(x, 0) for x in t), total)
            for t in a.groups
            if any(df.get(x) for x in t)
        }
        cos = vectors.similarities(qvecs[q.text], cands)
        when = find_dates(q.text)
        rows = index.chunks(cands)
        m = np.zeros((len(cands), len(FEATURES)))
        rel = np.zeros(len(cands))
        for i, c in enumerate(cands):
            summary, body, meta = stored.get(c, ([], [], []))
            terms = {*summary, *body, *meta}
            m[i] = (
                1 / (p.k + lr[c]) if c in lr else 0.0,
                1 / (p.k + vr[c]) if c in vr else 0.0,
                cos.get(c, 0.0),
                coverage(a.groups, terms, weights),
                float(has_adjacent_pair(a.groups, (summary, body))),
                float(when is not None and rows[c].updated_at in when),
                float(a.asks_when and timed({*summary, *body})),
                0.0,
                0.0,
            )
            rel[i] = len(holds[rows[c].note_id] & q.evidence) / len(q.evidence)
        notes = index.note_times(cands)
        near = session_context([notes[c] for c in cands], (m[:, 3], m[:, 2]), p.session_ms)
        m[:, -2], m[:, -1] = near
        out.append((m, rel))
    return out


def _rank_map(ranking: list[tuple[int, float]]) -> dict[int, int]:
    out: dict[int, int] = {}
    previous, rank = None, 0
    for position, (cid, s) in enumerate(ranking, 1):
        if s != previous:
            rank, previous = position, s
        out[cid] = rank
    return out


def _fit_objective(data: list[tuple[Any, Any]], w: Any) -> float:
    import numpy as np

    total = 0.0
    for m, rel in data:
        order = np.argsort(-(m @ w), kind="stable")
        total += rel[order[:5]].sum() + rel[order[:10]].sum()
    return total / max(len(data), 1)


def fit(data: list[tuple[Any, Any]], start: dict[str, float], rounds: int = 3) -> dict[str, float]:
    """Coordinate ascent from `start` (lexical_weight stays 1: the scale)."""
    import numpy as np

    w = np.array([start[f] for f in FEATURES], dtype=float)
    best = _fit_objective(data, w)
    for _ in range(rounds):
        improved = False
        for j in range(1, len(FEATURES)):
            base = w[j] if w[j] > 0 else 0.01
            for value in (0.0, base * 0.5, base * 0.8, base * 1.25, base * 2, base * 4):
                trial = w.copy()
                trial[j] = value
                got = _fit_objective(data, trial)
                if got > best + 1e-9:
                    best, w, improved = got, trial, True
        if not improved:
            break
    return {f: round(float(v), 5) for f, v in zip(FEATURES, w, strict=True)}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="LoCoMo development set tools.")
    parser.add_argument("--ablation", action="store_true", help="print the ablation table")
    parser.add_argument("--work", type=Path, default=Path("/tmp/memdir-bench-retrieval"))
    args = parser.parse_args()
    if args.ablation:
        ablation(args.work)

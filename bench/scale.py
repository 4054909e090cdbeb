"""Benchmark: the search index at 1k / 10k / 100k notes (reindex, refresh, search, memory, disk).

Run as ``python bench/scale.py [--sizes 1000,10000] [--queries 200]``. Each size runs in
its own subprocess (so peak RSS does not accumulate) in a temporary project and
MEMDIR_HOME that are removed afterwards. Notes are written directly as files with
`render_note`: ~300 characters of text drawn from a few thousand words with Zipf-like
frequencies (English function words first, then made-up content words), a summary
and a few tags. Queries are one to three content words drawn the same way, half of
them with a function word as people type them ("the", "of").
``[embed] provider = "none"`` keeps the lexical figures free of any model.

Hybrid search is measured without embedding the notes: every chunk awaiting a vector
gets a random unit 384-d vector under a fake embedder id (`SearchIndex.put_vectors`),
and the query vector is random too. That times the search path (refresh, FTS5, the
matrix product, fusion and rerank), not a model, and says nothing about quality.

No assertions: the figures are printed beside their targets for people to read.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

_SYLLABLES = [
    *("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "fa", "gu", "ho", "ji", "ku"),
    *("le", "mo", "na", "pe", "qui", "ri", "su", "ta", "ve", "wo", "xa", "yo", "ze"),
    *("bra", "cle", "dro", "fri", "glo", "pla", "stre", "tri"),
]
#: The head of the Zipf distribution is English function words, as in real text: notes
#: index them, queries drop them as stop words.
_FUNCTION_WORDS = [
    *("the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "on", "with", "as"),
    *("was", "at", "by", "this", "be", "from", "or", "are", "an", "but", "not", "have"),
    *("has", "we", "they", "which", "their", "were", "been", "if", "will", "can", "more"),
    *("when", "there", "all"),
]
_TAGS = [f"topic{i}" for i in range(60)]
_DIM = 384


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words: dict[str, None] = dict.fromkeys(_FUNCTION_WORDS)
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


class _Zipf:
    """Draws words with probability ∝ 1 / rank (s = 1.07)."""

    def __init__(self, words: Sequence[str], rng: random.Random) -> None:
        self.words = list(words)
        self.rng = rng
        weights = [1.0 / (rank**1.07) for rank in range(1, len(words) + 1)]
        self.cum = list(np.cumsum(weights))

    def sample(self, n: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=n)


def _sentence(zipf: _Zipf, rng: random.Random) -> str:
    words = zipf.sample(rng.randint(6, 14))
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _write_store(directory: Path, n: int, rng: random.Random, zipf: _Zipf) -> None:
    from memdir.core import Note, render_note

    directory.mkdir(parents=True)
    base = 1_700_000_000_000
    for i in range(n):
        body = ""
        while len(body) < rng.randint(220, 380):
            body += _sentence(zipf, rng) + (" " if rng.random() < 0.8 else "\n\n")
        note = Note(
            id=f"note-{i:06d}",
            summary=" ".join(zipf.sample(rng.randint(3, 7))).capitalize(),
            body=body.strip(),
            tags=tuple(sorted(set(rng.sample(_TAGS, rng.randint(1, 3))))),
            created_at=base + i,
            updated_at=base + i,
        )
        (directory / f"{note.id}.md").write_bytes(render_note(note))


class _RandomEmbedder:
    """Random unit vectors under a fake identity: times the search path, not a model."""

    def __init__(self, seed: int) -> None:
        from memdir.embed import EmbedderInfo

        self._info = EmbedderInfo("bench-random", "1", _DIM)
        self._rng = np.random.default_rng(seed)

    @property
    def info(self) -> Any:
        return self._info

    def _unit(self, rows: int) -> np.ndarray:
        m = self._rng.standard_normal((rows, _DIM)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        return m

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._unit(len(texts))

    def embed_query(self, text: str) -> np.ndarray:
        out: np.ndarray = self._unit(1)[0]
        return out


def _queries(words: Sequence[str], rng: random.Random, n: int) -> list[str]:
    """One to three content words (Zipf-distributed), half of them with a function word."""
    content = _Zipf([w for w in words if w not in _FUNCTION_WORDS], rng)
    out = []
    for _ in range(n):
        terms = content.sample(rng.randint(1, 3))
        if rng.random() < 0.5:
            terms.insert(rng.randrange(len(terms) + 1), rng.choice(_FUNCTION_WORDS[:12]))
        out.append(" ".join(terms))
    return out


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _index_bytes(home: Path, suffix: str) -> int:
    return sum(p.stat().st_size for p in (home / "index").glob(f"*.sqlite3{suffix}"))


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    """Resident memory now (Linux: /proc/self/statm), or nan elsewhere."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_one(n: int, queries: int, seed: int) -> dict[str, Any]:
    """Build a store of `n` notes and measure it (runs inside the per-size subprocess)."""
    from memdir import Memory

    rng = random.Random(seed)
    zipf = _Zipf(_vocabulary(rng, 4000), rng)
    base = Path(tempfile.mkdtemp(prefix="memdir-scale-"))
    out: dict[str, Any] = {"notes": n}
    try:
        home, project = base / "home", base / "project"
        home.mkdir()
        (home / "config.toml").write_text(
            f'[memory]\nmaxNotes = {max(n, 5000)}\n\n[embed]\nprovider = "none"\n',
            encoding="utf-8",
        )
        started = time.perf_counter()
        _write_store(project / "MEMORY", n, rng, zipf)
        out["write_files_s"] = time.perf_counter() - started

        memory = Memory.open(project, home=home)
        # The first index of foreign files also records each one in history ("observed").
        out["first_index_s"] = _timed(memory.index.reindex)
        memory.close()
        for f in (home / "index").glob("*.sqlite3*"):
            f.unlink()
        memory = Memory.open(project, home=home)
        out["cold_reindex_s"] = _timed(memory.index.reindex)
        stats = memory.index.reindex()
        out["chunks"] = stats.chunks
        memory.close()
        out["rss_after_index_mb"] = _peak_rss_mb()

        # Files older than the racy window, as in a store at rest.
        old = time.time_ns() - 60_000_000_000
        for f in (project / "MEMORY").iterdir():
            os.utime(f, ns=(old, old))
        time.sleep(2.1)  # setting the times changed each ctime: past the racy window too
        memory = Memory.open(project, home=home)
        retriever = memory.index.retriever
        store = memory.stores.by_scope[memory.scopes[0]]
        retriever.refresh(store)  # picks up the new stamps once
        memory.close()

        fresh = Memory.open(project, home=home)
        fresh_store = fresh.stores.by_scope[fresh.scopes[0]]
        out["refresh_fresh_s"] = _timed(lambda: fresh.index.retriever.refresh(fresh_store))
        out["refresh_warm_s"] = statistics.median(
            _timed(lambda: fresh.index.retriever.refresh(fresh_store)) for _ in range(5)
        )
        memory = fresh
        retriever = memory.index.retriever
        store = fresh_store

        qrng = random.Random(seed + 1)
        texts = _queries(zipf.words, qrng, queries)
        memory.search(texts[0], method="lexical")  # warm-up
        lexical = [_timed(lambda q=q: memory.search(q, method="lexical")) for q in texts]
        out["db_mb"] = _index_bytes(home, "") / 1e6
        out["wal_mb"] = _index_bytes(home, "-wal") / 1e6

        embedder = _RandomEmbedder(seed)
        index = retriever.index(store)
        started = time.perf_counter()
        while pending := index.pending(embedder.info.id, limit=5000):
            index.put_vectors(
                embedder.info.id,
                [h for h, _ in pending],
                embedder.embed_documents([t for _, t in pending]),
            )
        out["random_vectors_s"] = time.perf_counter() - started
        retriever.use_embedder(embedder)
        memory.search(texts[0])  # warm-up: builds the vector matrix once
        hybrid = [_timed(lambda q=q: memory.search(q)) for q in texts]

        # A long-running host (MCP server, page): the directory is watched, so a query
        # looks only at the files changed since the last one.
        memory.watch_files()
        memory.search(texts[0])  # the first query after the watch looks at every file
        lexical_watched = [_timed(lambda q=q: memory.search(q, method="lexical")) for q in texts]
        hybrid_watched = [_timed(lambda q=q: memory.search(q)) for q in texts]
        # ... and one note edited in place before each query.
        victim = project / "MEMORY" / "note-000000.md"
        original = victim.read_bytes()

        def edited(q: str, i: int) -> None:
            victim.write_bytes(original.replace(b"\n\n", f"\n\nedit {i}\n\n".encode(), 1))
            memory.search(q)

        hybrid_edited = [_timed(lambda q=q, i=i: edited(q, i)) for i, q in enumerate(texts)]
        memory.index.retriever.refresh(store)

        # The same queries without the per-query freshness check (a stat of every file).
        retriever.refresh = lambda store, progress=None: None  # type: ignore[method-assign]
        lexical_only = [_timed(lambda q=q: memory.search(q, method="lexical")) for q in texts]
        hybrid_only = [_timed(lambda q=q: memory.search(q)) for q in texts]
        out["steady_rss_mb"] = _rss_mb()  # a host after its searches, the store open
        memory.close()
        out["vectors_db_mb"] = (_index_bytes(home, "") + _index_bytes(home, "-wal")) / 1e6

        for name, samples in (
            ("lexical", lexical),
            ("hybrid", hybrid),
            ("lexical_norefresh", lexical_only),
            ("hybrid_norefresh", hybrid_only),
            ("lexical_watched", lexical_watched),
            ("hybrid_watched", hybrid_watched),
            ("hybrid_edited", hybrid_edited),
        ):
            out[f"{name}_p50_ms"] = statistics.median(samples) * 1000
            out[f"{name}_p95_ms"] = _percentile(samples, 0.95) * 1000
        out["peak_rss_mb"] = _peak_rss_mb()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def _targets(n: int) -> dict[str, str]:
    t: dict[str, str] = {}
    if n == 10_000:
        t["search"] = "p95 < 30 ms"
        t["refresh"] = "< 1 s"
        t["cold"] = "< 15 s"
    if n == 100_000:
        t["search"] = "p95 < 150 ms"
        t["rss"] = "< 250 MB"
    return t


def _report(r: dict[str, Any]) -> None:
    n = r["notes"]
    t = _targets(n)

    def line(label: str, value: str, target: str = "") -> None:
        print(f"  {label:<44} {value:>14}   {('target ' + target) if target else ''}")

    print(f"\n{n:,} notes ({r['chunks']:,} chunks)")
    line("write note files", f"{r['write_files_s']:.2f} s")
    line("first index (incl. history of foreign files)", f"{r['first_index_s']:.2f} s")
    line("cold reindex, lexical only", f"{r['cold_reindex_s']:.2f} s", t.get("cold", ""))
    line(
        "no-change refresh, new Memory",
        f"{r['refresh_fresh_s'] * 1000:.1f} ms",
        t.get("refresh", ""),
    )
    line("no-change refresh, warm", f"{r['refresh_warm_s'] * 1000:.1f} ms", t.get("refresh", ""))

    def pair(name: str) -> str:
        return f"{r[name + '_p50_ms']:.1f} / {r[name + '_p95_ms']:.1f} ms"

    line("search lexical p50 / p95, unwatched", pair("lexical"))
    line("search hybrid* p50 / p95, unwatched", pair("hybrid"))
    line("search lexical p50 / p95, watched (host)", pair("lexical_watched"), t.get("search", ""))
    line("search hybrid* p50 / p95, watched (host)", pair("hybrid_watched"), t.get("search", ""))
    line("  watched, one note edited before each query", pair("hybrid_edited"))
    line("  without the per-query refresh: lexical", pair("lexical_norefresh"))
    line("  without the per-query refresh: hybrid*", pair("hybrid_norefresh"))
    line("random vectors inserted (put_vectors)", f"{r['random_vectors_s']:.2f} s")
    line("index on disk, lexical (db + wal)", f"{r['db_mb']:.1f} + {r['wal_mb']:.1f} MB")
    line("index on disk with the 384-d vectors, closed", f"{r['vectors_db_mb']:.1f} MB")
    line("peak RSS after indexing", f"{r['rss_after_index_mb']:.0f} MB", t.get("rss", ""))
    line("peak RSS, hybrid search included", f"{r['peak_rss_mb']:.0f} MB", t.get("rss", ""))
    line("steady RSS after the searches, store open", f"{r['steady_rss_mb']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated note counts")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per method")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(run_one(args.one, args.queries, args.seed)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    print(f"memdir scale benchmark: {args.queries} queries per method, seed {args.seed}")
    print("* hybrid: random unit 384-d vectors under a fake embedder id, random query vector;")
    print("  it times the search path (refresh, FTS5, matrix product, fusion), not a model.")
    for n in sizes:
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--one",
                str(n),
                "--queries",
                str(args.queries),
                "--seed",
                str(args.seed),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        _report(json.loads(done.stdout.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()

"""Benchmark: approximate (usearch HNSW, `memdir.index.ann`) against exact vector search.

Run as ``python bench/ann.py [--n 1000000] [--queries 500] [--exact-queries 50]``
(needs the ``ann`` extra). The data are synthetic unit 384-d vectors in 2,000 gaussian
clusters ("topics") grouped under 40 "subjects": a topic's centre is its subject's
random direction plus 0.7 × a random unit vector of its own (so topics of a subject
have cosines of ~0.67), and a row is its topic's centre plus a gaussian in a random
16-d subspace of the topic (σ 0.15 per direction) plus isotropic noise (σ 0.01 per
dimension). At 1M a query's 10th neighbour then has a cosine of ~0.85 and a random row
~0.01. Uniform random vectors, or clusters with noise in all 384 dimensions
(``--isotropic``: mutually orthogonal centres, σ 0.06), leave every neighbour about as
near as any other member of its cluster and give a graph no path between clusters;
they are the worst case for any graph index. Queries are drawn like the rows.

What is measured, through the same `AnnIndexes` / `ApproximateIndex` that the search
index uses (built in the calling thread here, with 2 threads adding vectors):

* build: adding every vector in batches of 5,000 (time, batches/s, vectors/s),
  including the save next to a stand-in database file; then loading that file again
  (digest check + restore) as a new process would;
* memory: RSS growth while building (the float32 matrix is already resident, as in the
  search index), usearch's own figure, and the file's size;
* recall@10 against exact numpy search (`X @ q`, argsort) on `--queries` queries, and
  p50/p95 latency of `search(q, 10)`; exact latency on `--exact-queries` of them
  (exact search at 1M is ~0.1–0.3 s a query, so all 500 would dominate the run);
* an incremental update: 1% of the rows removed and 1% new rows added, the difference
  applied to the graph (time), recall measured again, and a check that no removed row
  comes back in any answer.

No assertions: the figures are printed for people to read. Timings are wall-clock on a
shared machine; compare rows of one run, not runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memdir.index.ann import AnnIndexes, AnnParams, ApproximateIndex
from memdir.index.vectors import MatrixIndex

DIM = 384
CLUSTERS = 2_000
SUBJECTS = 40
TIE = 0.7
SPREAD_DIMS = 16
SPREAD = 0.15
NOISE = 0.01
ISOTROPIC = 0.06


def _unit(m: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    out: npt.NDArray[np.float32] = m / np.linalg.norm(m, axis=-1, keepdims=True)
    return out


def _rss_mb() -> float:
    with Path("/proc/self/statm").open() as f:
        pages = int(f.read().split()[1])
    return pages * 4096 / 1e6


class Clusters:
    """Gaussian clusters of unit vectors (see the module docstring)."""

    def __init__(self, rng: np.random.Generator, *, isotropic: bool) -> None:
        self.rng = rng
        self.isotropic = isotropic
        centres = _unit(rng.standard_normal((CLUSTERS, DIM), dtype=np.float32))
        if not isotropic:
            subjects = _unit(rng.standard_normal((SUBJECTS, DIM), dtype=np.float32))
            centres = _unit(subjects[rng.integers(0, SUBJECTS, CLUSTERS)] + TIE * centres)
        self.centres = centres
        basis = rng.standard_normal((CLUSTERS, SPREAD_DIMS, DIM), dtype=np.float32)
        self.basis = basis / np.float32(np.sqrt(DIM))  # rows of ~unit length

    def draw(self, n: int) -> npt.NDArray[np.float32]:
        out = np.empty((n, DIM), dtype=np.float32)
        for start in range(0, n, 50_000):
            m = min(n, start + 50_000) - start
            labels = self.rng.integers(0, CLUSTERS, m)
            block = self.centres[labels]
            if self.isotropic:
                block += self.rng.standard_normal((m, DIM), dtype=np.float32) * ISOTROPIC
            else:
                order = np.argsort(labels, kind="stable")
                cuts = np.flatnonzero(np.diff(labels[order])) + 1
                for rows in np.split(order, cuts):
                    z = self.rng.standard_normal((rows.size, SPREAD_DIMS), dtype=np.float32)
                    block[rows] += (z * np.float32(SPREAD)) @ self.basis[labels[rows[0]]]
                block += self.rng.standard_normal((m, DIM), dtype=np.float32) * NOISE
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            out[start : start + m] = block
        return out


def _truth(
    ids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]
) -> list[set[int]]:
    """Exact top-10 chunk ids per query (numpy, all cores)."""
    out: list[set[int]] = []
    for start in range(0, queries.shape[0], 50):
        scores = matrix @ queries[start : start + 50].T
        top = np.argpartition(-scores, 10, axis=0)[:10].T
        out.extend(set(map(int, ids[row])) for row in top)
    return out


def _contrast(matrix: npt.NDArray[np.float32], queries: npt.NDArray[np.float32]) -> str:
    """Mean cosine of a query's 1st, 10th and 100th neighbour, and of a random row."""
    scores = matrix @ queries[:50].T
    ranked = -np.sort(-np.partition(scores, scores.shape[0] - 100, axis=0)[-100:], axis=0)
    nth = [float(ranked[i].mean()) for i in (0, 9, 99)]
    first, tenth, hundredth = (f"{v:.2f}" for v in nth)
    return (
        f"cosine of the 1st / 10th / 100th neighbour {first} / {tenth} / {hundredth}, "
        f"any row {float(scores.mean()):.2f}"
    )


def _measure(
    index: MatrixIndex, queries: npt.NDArray[np.float32], truth: list[set[int]] | None
) -> tuple[float, float, float, set[int]]:
    """(recall@10, p50 ms, p95 ms, every id returned)."""
    times: list[float] = []
    hits = 0
    seen: set[int] = set()
    for i, q in enumerate(queries):
        t = time.perf_counter()
        found = index.search(q, 10)
        times.append((time.perf_counter() - t) * 1e3)
        ids = {cid for cid, _ in found}
        seen |= ids
        if truth is not None:
            hits += len(ids & truth[i])
    q = statistics.quantiles(times, n=20) if len(times) > 1 else times * 19
    recall = hits / (10 * len(queries)) if truth is not None else float("nan")
    return recall, statistics.median(times), q[18], seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="vectors (default 1M)")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--exact-queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--isotropic", action="store_true", help="noise in all 384 dimensions (the hard case)"
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    clusters = Clusters(rng, isotropic=args.isotropic)

    t = time.perf_counter()
    matrix = clusters.draw(args.n)
    queries = clusters.draw(args.queries)
    ids = np.arange(args.n, dtype=np.int64) * 3 + 1  # chunk ids are not row numbers
    print(f"data: {args.n:,} × {DIM} clustered unit vectors in {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    truth = _truth(ids, matrix, queries)
    print(f"data: {_contrast(matrix, queries)}")
    print(
        f"exact top-10 of {args.queries} queries (numpy, batched): {time.perf_counter() - t:.1f} s"
    )
    rows: list[tuple[str, str]] = []

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "index.db"
        params = AnnParams(threshold=0, background=False)
        indexes = AnnIndexes(db, params)
        rss = _rss_mb()
        t = time.perf_counter()
        index = indexes.index("bench", ids, matrix)
        assert isinstance(index, ApproximateIndex), "usearch missing: pip install 'memdir[ann]'"
        if not index.prepare():
            sys.exit("the graph could not be built")
        build = time.perf_counter() - t
        grown = _rss_mb() - rss
        files = sorted(Path(tmp).glob("index.db.ann-*.usearch"))
        disk = sum(f.stat().st_size for f in files) / 1e6
        batches = -(-args.n // params.batch)
        rows += [
            ("build (add in batches + save)", f"{build:.1f} s"),
            ("  batches of 5k / s", f"{batches / build:.2f}"),
            ("  vectors / s", f"{args.n / build:,.0f}"),
            ("memory: RSS growth while building", f"{grown:,.0f} MB"),
            (
                "memory: float32 matrix (exact, resident either way)",
                f"{matrix.nbytes / 1e6:,.0f} MB",
            ),
            ("disk: saved graph", f"{disk:,.0f} MB"),
        ]

        t = time.perf_counter()
        reloaded = AnnIndexes(db, params).index("bench", ids, matrix)
        assert isinstance(reloaded, ApproximateIndex)
        ok = reloaded.prepare()
        rows.append(
            (
                "load saved graph (digest + restore)",
                f"{time.perf_counter() - t:.1f} s{'' if ok else ' FAILED'}",
            )
        )
        del reloaded

        recall, p50, p95, _ = _measure(index, queries, truth)
        rows += [
            (
                f"ANN recall@10 (vs exact numpy), ef_search={params.expansion_search}",
                f"{recall:.4f}",
            ),
            ("ANN search(q, 10) p50 / p95", f"{p50:.2f} / {p95:.2f} ms"),
        ]
        # The same saved graph searched with other beam widths (recall against latency).
        for ef in (64, 256, 512):
            if ef == params.expansion_search:
                continue
            wider = AnnIndexes(db, replace(params, expansion_search=ef)).index("bench", ids, matrix)
            assert isinstance(wider, ApproximateIndex)
            if wider.prepare():
                w_recall, w50, w95, _ = _measure(wider, queries, truth)
                rows.append(
                    (
                        f"  at ef_search={ef}: recall@10, p50 / p95",
                        f"{w_recall:.4f}, {w50:.2f} / {w95:.2f} ms",
                    )
                )
            del wider
        exact = MatrixIndex(ids, matrix)
        few = queries[: args.exact_queries]
        e_recall, e50, e95, _ = _measure(exact, few, truth[: args.exact_queries])
        rows += [
            ("exact recall@10", f"{e_recall:.4f}"),
            (f"exact search(q, 10) p50 / p95 ({len(few)} q)", f"{e50:.1f} / {e95:.1f} ms"),
        ]

        # Incremental update: 1% of rows removed, 1% new rows added.
        churn = max(1, args.n // 100)
        gone = np.sort(rng.choice(args.n, churn, replace=False))
        keep = np.ones(args.n, dtype=bool)
        keep[gone] = False
        fresh = clusters.draw(churn)
        new_ids = np.concatenate((ids[keep], np.arange(churn, dtype=np.int64) * 3 + 3 * args.n + 1))
        new_matrix = np.concatenate((matrix[keep], fresh))
        del matrix, exact
        truth2 = _truth(new_ids, new_matrix, queries)
        t = time.perf_counter()
        updated = indexes.index("bench", new_ids, new_matrix)
        assert isinstance(updated, ApproximateIndex)
        ok = updated.prepare()
        step = time.perf_counter() - t
        recall2, u50, u95, seen = _measure(updated, queries, truth2)
        back = len(seen & set(map(int, ids[gone])))
        rows += [
            (
                f"update: -{churn:,} / +{churn:,} rows (keys, diff, save)",
                f"{step:.1f} s{'' if ok else ' FAILED'}",
            ),
            ("  ANN recall@10 after update", f"{recall2:.4f}"),
            ("  ANN p50 / p95 after update", f"{u50:.2f} / {u95:.2f} ms"),
            ("  removed rows returned", f"{back}"),
        ]
        indexes.close()

    width = max(len(k) for k, _ in rows)
    data = "isotropic clusters" if args.isotropic else "2,000 topics of 40 subjects"
    print(
        f"\nANN vs exact at {args.n:,} vectors ({data}; usearch {params.dtype}, "
        f"M={params.connectivity}, ef_add={params.expansion_add}, "
        f"ef_search={params.expansion_search}, {params.threads} build threads)"
    )
    for key, value in rows:
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()

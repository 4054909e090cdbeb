"""Per-message recall latency (§4.2) over a store of synthetic but varied notes.

Run: python bench/recall.py [--notes 5000] [--messages 300] [--work DIR]
Writes the notes as files (with `memdir.core.render_note`) into a fresh project, then
times `Memory.recall` over the messages: the first call (cold: every note is read and
tokenised) separately, then p50/p95/max of the rest (target p95 < 15 ms), and how many
messages recalled something.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memdir import Memory
from memdir.core import Note, NoteType, render_note
from memdir.retrieve import Recaller


def _words(text: str) -> list[str]:
    return text.split()


_EN_TOPICS = _words("""
    database migration schema index query cache redis postgres sqlite replica backup restore
    deploy release staging production rollback pipeline docker kubernetes helm terraform
    frontend react component styling tailwind accessibility layout routing bundle webpack
    testing pytest fixture mock coverage flaky snapshot benchmark profiling latency memory
    logging metrics tracing grafana alert oncall incident postmortem dashboard sentry
    payment invoice pricing discount checkout subscription refund currency tax customer
    auth login session token oauth permission role password sso audit encryption
    api endpoint pagination ratelimit webhook graphql grpc versioning timeout retry
    email notification queue worker scheduler cron batch export import csv pdf report
""")
_DE_TOPICS = _words("""
    datenbank migration sicherung wiederherstellung bereitstellung freigabe rechnung
    preise rabatt kunde steuer buchhaltung abrechnung anmeldung berechtigung passwort
    schnittstelle benachrichtigung warteschlange bericht export protokoll überwachung
    oberfläche komponente barrierefreiheit zeitzone sprache übersetzung vertrag
""")
_ZH_TOPICS = _words("""
    数据库 迁移 备份 部署 发布 回滚 前端 组件 样式 测试 覆盖率 日志 监控 告警 支付 发票
    价格 折扣 订单 用户 权限 登录 接口 分页 限流 通知 队列 报表 导出 设计稿 周报 时区
""")
_EN_TEMPLATES = (
    "Use {a} for {b}, not the old approach",
    "{A} must stay compatible with {b} until the next release",
    "The team decided to move {a} into the {b} service",
    "{A} settings live in the {b} dashboard",
    "User prefers {a} examples before {b} theory",
    "Do not change {a} without checking {b} first",
)
_DE_TEMPLATES = (
    "{A} wird über {b} abgewickelt, nicht manuell",
    "Für {a} gilt die Regel aus der {b}",
    "{A} und {b} werden gemeinsam geprüft",
)
_ZH_TEMPLATES = ("{a}统一使用{b}的方案", "{a}的文档在{b}页面", "修改{a}之前先确认{b}")
_BODY_EN = (
    "**Why:** it broke twice last quarter. **How to apply:** check {a} and {b} first.",
    "See the runbook for {a}; the owner of {b} reviews every change.",
    "This came up during the {a} incident; {b} was the root cause.",
)
_MESSAGES = (
    "How should I handle {a} in the {b} code?",
    "Can you update the {a} for {b}?",
    "Wie machen wir das mit {a} und {b}?",
    "{a}和{b}应该怎么处理？",
    "Thanks, looks good.",
    "Write a short poem about the sea.",
    "What does this function return when {a} is empty?",
    "Please refactor this loop.",
)


def _pick(rng: random.Random) -> tuple[str, str, list[str]]:
    pool = rng.choice((_EN_TOPICS, _EN_TOPICS, _DE_TOPICS, _ZH_TOPICS))
    a, b = rng.sample(pool, 2)
    if pool is _DE_TOPICS:
        summary = rng.choice(_DE_TEMPLATES)
    elif pool is _ZH_TOPICS:
        summary = rng.choice(_ZH_TEMPLATES)
    else:
        summary = rng.choice(_EN_TEMPLATES)
    text = summary.format(a=a, b=b, A=a.capitalize())
    tags = [a, b, *rng.sample(_EN_TOPICS, rng.randint(0, 2))]
    return text, rng.choice(_BODY_EN).format(a=a, b=b), tags


def write_notes(directory: Path, count: int, rng: random.Random) -> None:
    """`count` notes with varied summaries, tags, bodies, types and timestamps."""
    directory.mkdir(parents=True, exist_ok=True)
    types = [None, *NoteType]
    base = 1_780_000_000_000
    for i in range(count):
        summary, body, tags = _pick(rng)
        links = f" Related: [[n{rng.randrange(count)}]]." if rng.random() < 0.2 else ""
        note = Note(
            id=f"n{i}",
            summary=f"{summary} ({i})",
            body=body + links + " " + " ".join(rng.sample(_EN_TOPICS, 6)),
            type=rng.choice(types),
            tags=tuple(tags),
            created_at=base + i,
            updated_at=base + i * 1000,
            supersedes=(f"n{i - 1}",) if i and rng.random() < 0.02 else (),
            private=rng.random() < 0.01,
        )
        path = directory / f"{note.id}.md"
        path.write_bytes(render_note(note))
        # An existing store: files written a while ago (fresh files are re-read until
        # their timestamps are old enough to trust).
        past = time.time() - 86_400
        os.utime(path, (past, past))


def messages(count: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(count):
        pool = rng.choice((_EN_TOPICS, _DE_TOPICS, _ZH_TOPICS))
        a, b = rng.sample(pool, 2)
        out.append(rng.choice(_MESSAGES).format(a=a, b=b))
    return out


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[max(0, int(len(ordered) * 0.95) - 1)]


def _timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(7)
    work = args.work or Path(tempfile.mkdtemp(prefix="memdir-bench-recall-"))
    try:
        project = work / "project"
        write_notes(project / "MEMORY", args.notes, rng)
        texts = messages(args.messages, rng)
        with Memory.open(project, home=work / "home") as memory:
            start = time.perf_counter()
            first = memory.recall(texts[0])
            cold = (time.perf_counter() - start) * 1000
            times: list[float] = []
            attached = [first.count]
            for text in texts[1:]:
                start = time.perf_counter()
                result = memory.recall(text)
                times.append((time.perf_counter() - start) * 1000)
                attached.append(result.count)
            # The parts: reading the directories (every Memory call re-reads what changed),
            # and scoring alone over notes already loaded.
            scans = [_timed(memory.notes.list) for _ in range(30)]
            notes = memory.notes.list()
            recaller = Recaller()
            tokenise = _timed(lambda: recaller.score("warm up", notes))
            settings = memory.settings.recall
            scoring = [_timed(lambda t=t: recaller.recall(t, notes, settings)) for t in texts]
            # A long-running host (MCP server): the directories are watched, so a call
            # looks only at the files changed since the last one.
            memory.watch_files()
            memory.defer_usage_writes()
            memory.recall(texts[0])
            watched = [_timed(lambda t=t: memory.recall(t)) for t in texts[1:]]
            watched_scans = [_timed(memory.notes.list) for _ in range(30)]
        print(f"notes: {args.notes}  messages: {len(texts)}")
        print(
            f"cold first call: {cold:.0f} ms (every file read, recorded in history and "
            f"tokenised; tokenising alone: {tokenise:.0f} ms)"
        )
        print(
            f"Memory.recall, directories watched (a host): p50 {statistics.median(watched):.2f} "
            f"ms  p95 {_p95(watched):.2f} ms  max {max(watched):.2f} ms  (target p95 < 15 ms)"
        )
        print(
            f"  of which reading the directories (Memory.list): p50 "
            f"{statistics.median(watched_scans):.2f} ms  p95 {_p95(watched_scans):.2f} ms"
        )
        print(
            f"Memory.recall, unwatched (every file stat'ed): p50 {statistics.median(times):.2f} "
            f"ms  p95 {_p95(times):.2f} ms  max {max(times):.2f} ms"
        )
        print(
            f"  of which reading the directories (Memory.list): p50 "
            f"{statistics.median(scans):.2f} ms  p95 {_p95(scans):.2f} ms"
        )
        print(
            f"  scoring and rendering alone (Recaller.recall): p50 "
            f"{statistics.median(scoring):.2f} ms  p95 {_p95(scoring):.2f} ms"
        )
        print(
            f"messages that recalled something: {sum(1 for c in attached if c)}/{len(texts)}, "
            f"notes attached: {sum(attached)}"
        )
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

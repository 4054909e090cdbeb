"""Benchmark: `memdir import` at 1,000 and 10,000 notes for two source kinds (issue 12).

Run as ``python bench/import_speed.py [--sizes 1000,10000] [--kinds markdown,mcp-memory]``.
Each run gets a temporary project, MEMDIR_HOME and source (removed afterwards):

- ``markdown``: a folder of Markdown files (YAML frontmatter with title and tags on half of
  them, a first heading on the others, `[[wikilinks]]` between them, `#tags` inline);
- ``mcp-memory``: a `memory.jsonl` of entities with three to six observations each and
  relations between them.

Timed, as whole processes (start-up included): the first `memdir import --json` (every note
written, fsynced, in history and in the audit log), a second import of the same source
(everything unchanged), and the first `memdir search` after it (the lexical index is
built from the imported notes; ``[embed] provider = "none"``, so no embedding is timed —
embedding continues in the background in long-lived hosts). The target: 10,000 notes
imported in under 60 s on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 60.0
_WORDS = (
    "deploy",
    "rollback",
    "cache",
    "index",
    "schema",
    "migration",
    "token",
    "queue",
    "worker",
    "retry",
    "timeout",
    "budget",
    "pricing",
    "layout",
    "release",
    "review",
    "incident",
    "backup",
    "restore",
    "metric",
    "alert",
    "dashboard",
    "router",
    "session",
    "cookie",
    "build",
    "runner",
    "docker",
    "image",
    "registry",
    "branch",
    "commit",
    "merge",
    "conflict",
    "lint",
)


def _memdir() -> list[str]:
    script = Path(sys.executable).with_name("memdir")
    return [str(script)] if script.exists() else [sys.executable, "-m", "memdir"]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def make_markdown(root: Path, size: int, rng: random.Random) -> None:
    root.mkdir()
    titles = [f"{_text(rng, 3).title()} {i}" for i in range(size)]
    for i, title in enumerate(titles):
        link = titles[rng.randrange(size)]
        body = f"{_text(rng, 40)}.\n\nSee [[{link}]]. #{rng.choice(_WORDS)}\n"
        if i % 2:
            head = f"---\ntitle: {title}\ntags: [{rng.choice(_WORDS)}, bench]\n---\n"
            text = head + body
        else:
            text = f"# {title}\n\n{body}"
        (root / f"note-{i:05d}.md").write_text(text, encoding="utf-8")


def make_mcp_memory(root: Path, size: int, rng: random.Random) -> None:
    root.mkdir()
    names = [f"{_text(rng, 2).title()} {i}" for i in range(size)]
    lines = []
    for name in names:
        observations = [_text(rng, 12) for _ in range(rng.randint(3, 6))]
        lines.append(
            json.dumps(
                {
                    "type": "entity",
                    "name": name,
                    "entityType": "concept",
                    "observations": observations,
                }
            )
        )
    for _ in range(size):
        a, b = rng.sample(names, 2)
        lines.append(
            json.dumps({"type": "relation", "from": a, "to": b, "relationType": "relates_to"})
        )
    (root / "memory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


MAKERS = {"markdown": make_markdown, "mcp-memory": make_mcp_memory}


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed, done.stdout


def run(kind: str, size: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="memdir-bench-import-"))
    try:
        project, home, source = root / "project", root / "home", root / "source"
        project.mkdir()
        home.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        (home / "config.toml").write_text(
            '[embed]\nprovider = "none"\n\n[memory]\nmaxNotes = 200000\n'
        )
        MAKERS[kind](source, size, random.Random(size))
        env = {**os.environ, "MEMDIR_HOME": str(home)}
        base = [*_memdir(), "--project", str(project)]
        first, out = _timed([*base, "import", str(source), "--from", kind, "--json"], env)
        report = json.loads(out)
        second, out2 = _timed([*base, "import", str(source), "--from", kind, "--json"], env)
        again = json.loads(out2)
        search, _ = _timed([*base, "search", "deploy rollback", "--json"], env)
        rate = report["imported"] / first if first else 0
        verdict = "ok" if first < TARGET_S or size < 10_000 else "MISSED"
        print(
            f"{kind:11s} {size:6,d} notes: import {first:6.1f} s ({rate:6.0f} notes/s, target "
            f"< {TARGET_S:.0f} s at 10k: {verdict}); imported {report['imported']}, refused "
            f"{len(report['refused'])}, not read {len(report['problems'])}; second import "
            f"{second:5.1f} s (unchanged {again['unchanged']}, imported {again['imported']}); "
            f"first search {search:5.1f} s"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--kinds", default="markdown,mcp-memory")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        for kind in args.kinds.split(","):
            run(kind, size)


if __name__ == "__main__":
    main()

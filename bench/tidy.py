"""Benchmark: the tidy-up list (`memdir tidy`, issue 11) over 1,000 and 5,000 notes per scope.

Run as ``python bench/tidy.py [--sizes 1000,5000] [--repeat 3]``. Each size gets a temporary
project and MEMDIR_HOME (removed afterwards) whose project scope holds that many notes,
written directly as files: summaries and ~400-character bodies drawn from a few thousand
made-up words with Zipf-like frequencies, a few tags each, and planted findings —

- duplicate groups (2–4 notes restating one summary in other words) for `same_topic`,
- pairs stating two values for one setting ("… timeout is 30 seconds" / "… 45 seconds")
  for `contradiction`,
- the labelled pairs of tests/tidy/pairs.py (half contradicting, half compatible, in five
  languages) among them, to measure contradiction recall and false alarms of the whole
  list (candidate pairs from the index, then the detector), not the detector alone,
- `[[links]]` to notes that do not exist for `broken_link`, paths that do not exist for
  `missing_file`, bodies over 8,000 characters for `too_long`, and files last touched
  200 days ago for `unused`.

Timed: the first `Memory.tidy()` of a fresh process with no search index (it builds the
index: every note is read and tokenised once), then warm API calls on an open `Memory`
(the median of `--repeat`), then whole CLI processes `memdir tidy --json` (start-up,
config, loading the notes, the index's refresh and the findings). The target is under
2 s at 5,000 notes. Also printed: how many planted findings were found, and how many
other findings the random notes gave. ``[embed] provider = "none"``: no model is involved anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.tidy.pairs import ALL as LABELLED

from memdir import Memory
from memdir.core import Note, render_note

_SYLLABLES = [
    *("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "fa", "gu", "ho", "ji", "ku"),
    *("le", "mo", "na", "pe", "qui", "ri", "su", "ta", "ve", "wo", "xa", "yo", "ze"),
    *("bra", "cle", "dro", "fri", "glo", "pla", "stre", "tri"),
]
_FUNCTION_WORDS = [
    *("the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "on", "with", "as"),
    *("was", "at", "by", "this", "be", "from", "or", "are", "an", "but", "not", "have"),
]
_TAGS = [f"topic{i}" for i in range(60)]
DAY_S = 86_400
TARGET_S = 2.0


class _Words:
    """Made-up content words drawn with probability ∝ 1 / rank."""

    def __init__(self, rng: random.Random, size: int = 4000) -> None:
        words: dict[str, None] = dict.fromkeys(_FUNCTION_WORDS)
        while len(words) < size:
            words["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
        self.words = list(words)
        self.rng = rng
        self.cum = list(np.cumsum([1.0 / (r**1.07) for r in range(1, size + 1)]))

    def sample(self, n: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cum, k=n)

    def content(self, n: int) -> list[str]:
        """`n` distinct content words (no function words): what a planted topic is about."""
        out: dict[str, None] = {}
        while len(out) < n:
            word = self.sample(1)[0]
            if word not in _FUNCTION_WORDS:
                out[word] = None
        return list(out)

    def sentence(self) -> str:
        words = self.sample(self.rng.randint(6, 14))
        return words[0].capitalize() + " " + " ".join(words[1:]) + "."


def _planted(size: int) -> dict[str, int]:
    return {
        "same_topic": max(5, size // 100),
        "contradiction": max(5, size // 200),
        "broken_link": max(5, size // 100),
        "missing_file": max(5, size // 200),
        "too_long": max(2, size // 1000),
        "unused": max(5, size // 100),
    }


Labelled = list[tuple[str, bool, list[str]]]


def build(project: Path, size: int, seed: int = 7) -> tuple[dict[str, list[list[str]]], Labelled]:
    """Write `size` notes into `project`/MEMORY; returns the planted findings' note ids by
    kind (a contradicting pair is planted as a same-topic pair too: it shares its subject),
    and the labelled pairs as (language, contradicts, note ids)."""
    rng = random.Random(seed)
    words = _Words(rng)
    directory = project / "MEMORY"
    directory.mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("")
    counts = _planted(size)
    planted: dict[str, list[list[str]]] = {kind: [] for kind in counts}
    now_ms = int(time.time() * 1000)
    notes: list[Note] = []
    old: list[str] = []

    def add(summary: str, body: str, tags: list[str] | None = None, age_ms: int = 0) -> Note:
        n = len(notes)
        note = Note(
            id=f"note-{n:05d}",
            summary=summary,
            body=body,
            tags=tuple(tags if tags is not None else rng.sample(_TAGS, rng.randint(1, 3))),
            created_at=now_ms - n * 1000 - age_ms,
            updated_at=now_ms - n * 1000 - age_ms,
        )
        notes.append(note)
        return note

    def body() -> str:
        return " ".join(words.sentence() for _ in range(rng.randint(3, 5)))

    for g in range(counts["same_topic"]):
        topic = words.content(5)
        tags = rng.sample(_TAGS, 2)
        group = []
        for _ in range(rng.randint(2, 4)):
            shuffled = topic[:]
            rng.shuffle(shuffled)
            summary = " ".join([*shuffled[:4], f"dup{g}"])
            group.append(add(summary.capitalize(), body(), tags).id)
        planted["same_topic"].append(group)
    for c in range(counts["contradiction"]):
        thing = " ".join(words.content(2))
        first, second = rng.sample([15, 30, 45, 60, 90, 120], 2)
        tags = [f"setting{c}"]
        pair = [
            add(f"The {thing} timeout is {first} seconds", f"Set to {first} seconds.", tags).id,
            add(f"The {thing} timeout is {second} seconds", f"Set to {second} seconds.", tags).id,
        ]
        planted["contradiction"].append(pair)
        planted["same_topic"].append(pair)
    for i in range(counts["broken_link"]):
        note = add(words.sentence()[:-1], body() + f" See [[missing-{i:04d}]].")
        planted["broken_link"].append([note.id])
    for i in range(counts["missing_file"]):
        note = add(words.sentence()[:-1], body() + f" Code in `src/app.py` and `src/gone{i}.py`.")
        planted["missing_file"].append([note.id])
    for _ in range(counts["too_long"]):
        note = add(words.sentence()[:-1], " ".join(words.sentence() for _ in range(200)))
        planted["too_long"].append([note.id])
    for _ in range(counts["unused"]):
        note = add(words.sentence()[:-1], body(), age_ms=200 * DAY_S * 1000)
        old.append(note.id)
        planted["unused"].append([note.id])
    labelled: Labelled = []
    for known in LABELLED:
        ids = [add(known.a[0], known.a[1], []).id, add(known.b[0], known.b[1], []).id]
        labelled.append((known.lang, known.contradicts, ids))
    while len(notes) < size:
        add(words.sentence()[:-1], body())
    for note in notes:
        (directory / f"{note.id}.md").write_bytes(render_note(note))
    stale = time.time() - 200 * DAY_S
    for note_id in old:
        os.utime(directory / f"{note_id}.md", (stale, stale))
    return planted, labelled


def _child(project: Path, home: Path, repeat: int) -> dict[str, object]:
    """Run in a fresh process: the first tidy (index built), then warm calls."""
    started = time.perf_counter()
    memory = Memory.open(project, home=home)
    findings = memory.tidy.findings()
    first = time.perf_counter() - started
    warm = []
    for _ in range(repeat):
        t = time.perf_counter()
        findings = memory.tidy.findings()
        warm.append(time.perf_counter() - t)
    memory.close()
    return {
        "first": first,
        "warm": statistics.median(warm),
        "findings": [[f.kind.value, list(f.notes)] for f in findings],
    }


def run(size: int, repeat: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="memdir-bench-tidy-"))
    try:
        project, home = root / "project", root / "home"
        home.mkdir()
        (home / "config.toml").write_text('[embed]\nprovider = "none"\n')
        planted, labelled = build(project, size)
        env = {**os.environ, "MEMDIR_HOME": str(home)}
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(project), str(home), str(repeat)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        api = json.loads(out.stdout)
        cli = []
        for _ in range(repeat):
            t = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "memdir", "--project", str(project), "tidy", "--json"],
                capture_output=True,
                text=True,
                env=env,
                cwd=project,
            )
            cli.append(time.perf_counter() - t)
            if done.returncode != 0:
                raise SystemExit(f"memdir tidy failed: {done.stderr}")
        listed = len(json.loads(done.stdout))
        cli_s = statistics.median(cli)
        verdict = "ok" if cli_s < TARGET_S and api["warm"] < TARGET_S else "OVER TARGET"
        print(f"\n{size:,} notes (project scope)")
        print(f"  first Memory.tidy(), building the index: {api['first']:.2f} s")
        print(f"  warm Memory.tidy() (median of {repeat}):   {api['warm']:.3f} s")
        print(
            f"  memdir tidy --json, whole process:        {cli_s:.2f} s "
            f"(target < {TARGET_S:.0f} s: {verdict})"
        )
        found: dict[str, list[set[str]]] = {kind: [] for kind in planted}
        for kind, notes in api["findings"]:
            found[kind].append(set(notes))
        largest = max((len(f) for f in found["same_topic"]), default=0)
        print(f"  findings listed: {listed}; largest same-topic group: {largest}")
        print("    kind            planted  found among them  other findings")
        in_pairs = {i for _, _, ids in labelled for i in ids}
        for kind, groups in planted.items():
            hit = sum(1 for g in groups if any(set(g) <= f for f in found[kind]))
            other = sum(
                1 for f in found[kind] if not any(set(g) <= f for g in groups) and not f & in_pairs
            )
            print(f"    {kind:14}  {len(groups):7}  {hit:16}  {other:14}")
        _labelled_figures(labelled, found["contradiction"])
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _labelled_figures(labelled: Labelled, contradictions: list[set[str]]) -> None:
    """Contradiction recall and false alarms of the list on the labelled pairs, by language."""
    flagged = {frozenset(f) for f in contradictions}
    print("    labelled pairs   contradicting: flagged / all   compatible: flagged / all")
    languages = sorted({lang for lang, _, _ in labelled})
    for lang in [*languages, "all"]:
        rows = [(c, frozenset(ids) in flagged) for la, c, ids in labelled if lang in (la, "all")]
        pos = [hit for c, hit in rows if c]
        neg = [hit for c, hit in rows if not c]
        print(f"      {lang:4}  {sum(pos):22} / {len(pos):<3}  {sum(neg):18} / {len(neg):<3}")
    cross = sum(
        1
        for f in contradictions
        if f & {i for _, _, ids in labelled for i in ids}
        and frozenset(f) not in {frozenset(ids) for _, _, ids in labelled}
    )
    print(f"      contradictions between notes of different labelled pairs: {cross}")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        result = _child(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        print(json.dumps(result))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args.repeat)


if __name__ == "__main__":
    main()

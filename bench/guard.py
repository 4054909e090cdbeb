"""Benchmark the credential guard: recall, false-positive rate and scan throughput.

Figures for the labelled corpus (tests/guard/corpus.py) and for the multilingual one
(tests/guard/corpus_multilingual.py: per batch, language and kind, with the seventh batch, its
encoded group and the eighth batch apart), then timings on 128 KiB bodies, including
label-like adversarial runs.

Run from the repository root:  PYTHONPATH=src python bench/guard.py
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.guard.corpus import NEGATIVES, POSITIVES
from tests.guard.corpus_multilingual import (
    ALL,
    BLIND,
    EIGHTH,
    ENCODED,
    FRESH,
    HELD,
    LANGUAGES,
    LATE,
    NINTH,
    SEVENTH,
    SIXTH,
    TENTH,
    TUNING,
    Case,
)

from memdir.guard import redact, scan_text

BODY_BYTES = 128 * 1024


def _body_from(texts: list[str]) -> str:
    """About BODY_BYTES of UTF-8 made by cycling through the given texts."""
    parts: list[str] = []
    size = 0
    i = 0
    while size < BODY_BYTES:
        chunk = texts[i % len(texts)] + "\n\n"
        parts.append(chunk)
        size += len(chunk.encode("utf-8"))
        i += 1
    return "".join(parts)


def _repeat(unit: str) -> str:
    """About BODY_BYTES of UTF-8 made of one repeated unit."""
    return unit * (BODY_BYTES // len(unit.encode("utf-8")) + 1)


def _throughput(text: str, fn: Callable[[str], object], rounds: int = 5) -> tuple[float, float]:
    """Best-of-rounds seconds per call and MB/s for fn(text)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - start)
    return best, len(text.encode("utf-8")) / best / 1e6


def _found(case: Case) -> bool:
    return any(f.line == case.line for f in scan_text(case.text))


def _row(label: str, cases: list[Case]) -> str:
    pos = [c for c in cases if c.positive]
    neg = [c for c in cases if not c.positive]
    recall = f"{sum(map(_found, pos)) / len(pos):7.2%}" if pos else "      -"
    fpr = f"{sum(bool(scan_text(c.text)) for c in neg) / len(neg):7.2%}" if neg else "      -"
    return f"  {label:12s} {len(pos):4d} {recall}   {len(neg):4d} {fpr}"


#: Misses left on purpose (see the seventh batch's header): an unquoted spaced value with no
#: connector, and a Russian label spelled with Latin letters chosen by sound.
_ACCEPTED_MISSES = {
    "s7-p018-it-prose",
    "s7-p101-ru-obfuscated",
    # Left after the tenth batch's round-4 tuning (see tests/guard/test_multilingual.py).
    "t10-en-p18-prose",
    "t10-fr-p02-chat",
    "t10-nl-p03-chat",
    "t10-ru-p04-email",
    "t10-tr-p00-prose",
    "t10-ko-p03-chat",
}


def _multilingual() -> bool:
    """Print recall and false-positive rate per batch, language and kind; True if every
    secret but the accepted misses is found and no look-alike is flagged."""
    print("\nmultilingual corpus            positives recall  negatives FPR")
    for name, batch in (
        ("tuning", TUNING),
        ("held", HELD),
        ("fresh", FRESH),
        ("late", LATE),
        ("blind", BLIND),
        ("sixth", SIXTH),
        ("seventh", SEVENTH),
        ("encoded", ENCODED),
        ("eighth", EIGHTH),
        ("ninth", NINTH),
        ("tenth", TENTH),
        ("all", ALL),
    ):
        print(_row(name, list(batch)))
    for title, cases in (
        ("", ALL),
        (" (blind batch)", BLIND),
        (" (sixth batch)", SIXTH),
        (" (seventh batch)", SEVENTH),
        (" (eighth batch)", EIGHTH),
        (" (ninth batch)", NINTH),
        (" (tenth batch)", TENTH),
    ):
        print(f"  by language{title}:")
        for lang in LANGUAGES:
            print(_row(lang, [c for c in cases if c.lang == lang]))
        print(f"  by kind{title}:")
        for kind in sorted({c.kind for c in cases}):
            print(_row(kind, [c for c in cases if c.kind == kind]))
    print("  by kind (encoded group):")
    print(_row("encoded", list(ENCODED)))
    missed = [c.id for c in ALL if c.positive and not _found(c)]
    flagged = [c.id for c in ALL if not c.positive and scan_text(c.text)]
    print(f"  missed: {missed or 'none'}\n  flagged: {flagged or 'none'}")
    return set(missed) <= _ACCEPTED_MISSES and not flagged


_ROOT = Path(__file__).resolve().parent.parent
#: Text nobody wrote for the guard: chat turns of the LoCoMo development split (read in
#: place, never copied) and the paragraphs of this project's own docs and spec.
_LOCOMO = _ROOT.parent / "shared" / "bench" / "locomo-dev.json"
_DOCS = [*sorted((_ROOT / "docs").glob("*.md")), _ROOT / "README.md", _ROOT / "CHANGELOG.md"]


def _foreign_text() -> None:
    """False refusals on ordinary text the corpus authors did not write (no secrets in it)."""
    sources: dict[str, list[str]] = {}
    if _LOCOMO.is_file():
        turns: list[str] = []

        def walk(node: object) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("text"), str) and "speaker" in node:
                    turns.append(node["text"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(json.loads(_LOCOMO.read_text("utf-8")))
        sources["LoCoMo dev chat turns"] = turns
    sources["docs paragraphs"] = [
        para for path in _DOCS if path.is_file() for para in path.read_text("utf-8").split("\n\n")
    ]
    print("\nfalse refusals on text not written for the guard:")
    for name, texts in sources.items():
        flagged = [t for t in texts if scan_text(t)]
        print(f"  {name:24s} {len(flagged):4d} of {len(texts):5d}")
        for text in flagged[:5]:
            print(f"    {text[:100]!r}")


def main() -> int:
    found = 0
    missed: list[str] = []
    for case in POSITIVES:
        kinds = [f.kind.lower() for f in scan_text(case.text) if f.line == case.line]
        if any(case.kind.lower() in k for k in kinds):
            found += 1
        else:
            missed.append(case.id)
    flagged = [case.id for case in NEGATIVES if scan_text(case.text)]

    print(f"positives: {len(POSITIVES)}  negatives: {len(NEGATIVES)}")
    print(f"recall:              {found / len(POSITIVES):7.2%}  missed: {missed or 'none'}")
    print(
        f"false-positive rate: {len(flagged) / len(NEGATIVES):7.2%}  flagged: {flagged or 'none'}"
    )

    bodies = {
        "clean notes (negatives)": _body_from([c.text for c in NEGATIVES]),
        "notes with secrets (all)": _body_from(
            [c.text for c in NEGATIVES] + [c.text for c in POSITIVES]
        ),
        "adversarial 'password='": _repeat("password="),
        "adversarial 'a'": _repeat("a"),
        "adversarial '密码是'": _repeat("密码是"),
        "adversarial 'Bearer '": _repeat("Bearer "),
        "multilingual notes (all)": _body_from([c.text for c in ALL]),
        "multilingual look-alikes": _body_from([c.text for c in ALL if not c.positive]),
        "adversarial 'Passwort: '": _repeat("Datenbankpasswort: "),
        "adversarial 'パスワードは'": _repeat("パスワードは"),
        "adversarial 'login: a / '": _repeat("login: a / "),
        "adversarial 'password:\\n'": _repeat("password:\n"),
        "adversarial 'a\\u200b'": _repeat("a\u200b"),
        "adversarial full-width": _repeat("ｐａｓｓｗｏｒｄ："),
        "adversarial 'recovery codes '": _repeat("recovery codes: 8f3k2-9dl2x word "),
        "adversarial 'Passwort: a b '": _repeat("Passwort: a b c d e f g "),
        "adversarial 'passphrase: '": _repeat("passphrase: tundra violet marble "),
        "adversarial 'wifi pin '": _repeat("wifi pin 1234 "),
        "adversarial 'P a s s w o r d: '": _repeat("P a s s w o r d: "),
        "adversarial 'Passw0rd: '": _repeat("Passw0rd: Pa$$w0rt= "),
        "adversarial 'is below:\\n'": _repeat("The password is below:\n"),
        "adversarial 'password: \"Ab 1! '": _repeat('password: "Ab 1! '),
        "adversarial 'db01  root  '": _repeat("db01  root  "),
        "adversarial 'user: a / '": _repeat("user: a / "),
        "adversarial escapes": _repeat("ghp%5Fab&#95;c `x`y **z**w "),
        "adversarial base64 runs": _repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldY "),
        "adversarial homoglyphs": _repeat("p\u0430ssword: gh\u0440_x "),
        "adversarial 'pw?\\n— ja: '": _repeat("Passwort?\n— ja: "),
        "adversarial 'Neues Passwort\\n'": _repeat("Neues Passwort\n"),
        "adversarial 'Zugangscode: '": _repeat("Zugangscode für das Tor: A1 "),
    }
    multilingual_ok = _multilingual()
    _foreign_text()
    print(f"\nthroughput on {BODY_BYTES // 1024} KiB bodies (best of 5):")
    for name, body in bodies.items():
        seconds, mbps = _throughput(body, scan_text)
        print(f"  scan_text  {name:34s} {seconds * 1000:8.1f} ms  {mbps:6.2f} MB/s")
    name = "notes with secrets (all)"
    seconds, mbps = _throughput(bodies[name], redact)
    print(f"  redact     {name:34s} {seconds * 1000:8.1f} ms  {mbps:6.2f} MB/s")
    return 0 if not missed and not flagged and multilingual_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Running every detector over a text, resolving overlaps, and reporting or redacting.

Detectors see the text normalised (full-width folded, invisible controls dropped, homoglyphs
read as Latin), and a second time with escapes undone when it has any; base64 runs are
decoded and checked for token shapes.  The hits are mapped back, so lines are counted and
values replaced in the caller's own text.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Mapping

from .answers import answer_hits
from .assign import assignment_hits
from .decode import base64_hits, prefixed_token_hits, unescaped_lines
from .hit import Finding, Hit
from .labelled import labelled_hits
from .normalise import normalise
from .phrasings import phrasing_hits
from .shapes import shape_hits
from .structured import structured_hits
from .vendors import vendor_hits

__all__ = ["redact", "scan_fields", "scan_text"]

# Redacting can, in contrived text, expose a second secret that an overlapping (and
# discarded) claim covered; a few passes reach a fixed point.
_MAX_REDACT_PASSES = 8


def _resolve(hits: Iterable[Hit]) -> list[Hit]:
    """Keep the most specific claim wherever claims overlap; return them in text order."""
    ordered = sorted(hits, key=lambda h: (h.priority, h.start, h.start - h.end))
    starts: list[int] = []
    kept: list[Hit] = []
    for hit in ordered:
        if hit.end <= hit.start:
            continue
        i = bisect.bisect_right(starts, hit.start)
        if i > 0 and kept[i - 1].end > hit.start:
            continue
        if i < len(kept) and kept[i].start < hit.end:
            continue
        starts.insert(i, hit.start)
        kept.insert(i, hit)
    return kept


def _detect(text: str) -> list[Hit]:
    found: list[Hit] = []
    found.extend(vendor_hits(text))
    found.extend(shape_hits(text))
    found.extend(assignment_hits(text))
    found.extend(labelled_hits(text))
    found.extend(structured_hits(text))
    found.extend(phrasing_hits(text))
    found.extend(answer_hits(text))
    return found


def _hits(text: str) -> list[Hit]:
    if not text:
        return []
    norm = normalise(text)
    seen = norm.text
    found = _detect(seen)
    found.extend(base64_hits(seen))
    for lo, plain in unescaped_lines(seen):
        # A second reading with escapes undone; its claims are mapped onto `seen`.
        found.extend(
            Hit(lo + plain.start(h.start), lo + plain.end(h.end), h.kind, h.priority)
            for h in itertools.chain(_detect(plain.text), prefixed_token_hits(plain))
        )
    hits = _resolve(found)
    if seen is text:
        return hits
    return [Hit(norm.start(h.start), norm.end(h.end), h.kind, h.priority) for h in hits]


def scan_text(text: str) -> list[Finding]:
    """Return every suspected credential in `text` as (kind, 1-based line), sorted by line."""
    findings: list[Finding] = []
    line, pos = 1, 0
    for hit in _hits(text):  # in text order, so counting newlines stays linear
        line += text.count("\n", pos, hit.start)
        pos = hit.start
        findings.append(Finding(hit.kind, line))
    return findings


def scan_fields(fields: Mapping[str, str]) -> list[tuple[str, Finding]]:
    """Scan each named field (summary, body, tags, ...) and attribute findings to it."""
    return [(name, finding) for name, value in fields.items() for finding in scan_text(value)]


def redact(text: str) -> str:
    """Replace each secret value with "[REDACTED:<kind>]", leaving everything else intact."""
    for _ in range(_MAX_REDACT_PASSES):
        hits = _hits(text)
        if not hits:
            break
        parts: list[str] = []
        pos = 0
        for hit in hits:
            parts.append(text[pos : hit.start])
            parts.append(f"[REDACTED:{hit.kind}]")
            pos = hit.end
        parts.append(text[pos:])
        text = "".join(parts)
    return text

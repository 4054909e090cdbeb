"""The refusal message: which kinds of secret, in which field and line, and what to do instead."""

from __future__ import annotations

from collections.abc import Sequence

from .hit import Finding

__all__ = ["describe"]

_ADVICE = (
    "nothing was written. Remove the secret (store where it lives, e.g. an environment "
    "variable name, instead of the value)."
)
# Labels whose spoken form starts with a vowel sound although the letter does not, or
# the reverse.
_AN_PREFIXES = ("npm", "SAS", "HMAC", "xAI", "SSH", "RSA")


def _article(kind: str) -> str:
    if kind.startswith(_AN_PREFIXES) or kind[:1].lower() in "aeio":
        return "an"
    return "a"


def describe(found: Sequence[tuple[str, Finding]]) -> str:
    """Build the refusal for (field, finding) pairs; it names kinds and places, never values."""
    seen = dict.fromkeys((finding.kind, field, finding.line) for field, finding in found)
    if not seen:
        return ""
    parts = [f"{_article(kind)} {kind} ({field}, line {line})" for kind, field, line in seen]
    if len(parts) == 1:
        return f"refused: this looks like {parts[0]}; {_ADVICE}"
    listing = ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"refused: these look like {listing}; {_ADVICE}"

"""The credential guard: find, describe and redact secrets in text before anything is written.

Pure functions over strings, no I/O and no imports from the rest of memdir.  A finding names
the kind of secret and its line, never the value, so it is safe to show, log or raise.

The text is normalised first (`_normalise`: NFKC per character, invisible controls dropped,
offsets mapped back).  Detectors, most specific first: vendor token formats (`_vendors`),
structural shapes such as private keys, JWTs and credentialed URLs (`_shapes`), values given
to secret-named keys in code and config (`_assign`), values that a label introduces in prose
of thirteen languages (`_labelled` over the `lexicon`), and values written below their key
or inside secret-named blocks and tables (`_structured`).  `_values` holds the value rules.
"""

from __future__ import annotations

from .hit import Finding
from .message import describe
from .scan import redact, scan_fields, scan_text

__all__ = ["Finding", "describe", "redact", "scan_fields", "scan_text"]

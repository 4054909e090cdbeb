"""The credential guard: find, describe and redact secrets in text before anything is written.

Pure functions over strings, no I/O and no imports from the rest of memdir.  A finding names
the kind of secret and its line, never the value, so it is safe to show, log or raise.
"""

from __future__ import annotations

from ._hit import Finding
from ._message import describe
from ._scan import redact, scan_fields, scan_text

__all__ = ["Finding", "describe", "redact", "scan_fields", "scan_text"]

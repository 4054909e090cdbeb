"""Give the memory a large piece of work freed back to the system.

glibc keeps what a process frees in its heap for later use, and after a large block is
freed it raises its mmap threshold, so the next large blocks come from that heap too.
After indexing or embedding 100,000 notes, or building their vector rows, that leaves
tens of MB resident that nothing uses (30 MB of 115 at 30,000 notes, measured with
``bench/scale.py``'s store). `release` asks glibc to return it (``malloc_trim``); with
another C library it does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from collections.abc import Callable

__all__ = ["LARGE", "release"]

#: Notes, chunks or vectors above which a piece of work is worth a `release` after it.
LARGE = 1_000


@functools.cache
def _trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim  # the C library this process runs on
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release() -> None:
    """Return the heap's free pages to the system (glibc); a no-op elsewhere."""
    trim = _trim()
    if trim is not None:
        trim(0)

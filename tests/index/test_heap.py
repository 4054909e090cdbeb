"""memdir.index.heap: freed heap memory goes back to the system after large work."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from memdir.index import heap


def test_release_is_harmless_anywhere() -> None:
    heap.release()
    heap.release()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim")
def test_release_returns_a_fragmented_heap_to_the_system() -> None:
    """Many 1 KB blocks freed around every tenth one that stays: the heap cannot shrink
    by itself, and `release` gives most of it back (resident anonymous memory drops)."""
    script = textwrap.dedent(
        """
        from memdir.index import heap

        def anon():
            for line in open("/proc/self/status"):
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) // 1024
            raise SystemExit("no RssAnon")

        blocks = [bytes(1024) + bytes([i % 251]) for i in range(150_000)]
        kept = blocks[::10]
        del blocks
        before = anon()
        heap.release()
        print(before, anon(), len(kept))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    before, after, _ = (int(x) for x in done.stdout.split())
    assert after < before - 50, (before, after)

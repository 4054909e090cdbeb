"""Which relative paths a note names (`memdir.tidy.paths`): paths in and out of backticks,
and the look-alikes that are not paths."""

from __future__ import annotations

import pytest

from memdir.tidy.paths import path_mentions


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("See `src/memdir/cli/` and `pyproject.toml`.", ["src/memdir/cli/", "pyproject.toml"]),
        ("run ./deploy.sh first", ["./deploy.sh"]),
        ("(see ../docs/x.md)", ["../docs/x.md"]),
        ("the parser is src/a/b.py.", ["src/a/b.py"]),
        ("`docs/x.md:12` and `src/y.py#L3-L9`", ["docs/x.md", "src/y.py"]),
        ("`.github/workflows/ci.yml`", [".github/workflows/ci.yml"]),
        ("`src/a.py` twice: `src/a.py`", ["src/a.py"]),
    ],
)
def test_paths_are_found(text: str, paths: list[str]) -> None:
    assert path_mentions(text) == paths


@pytest.mark.parametrize(
    "text",
    [
        "e.g. this, i.e. that",
        "and/or, read/write, client/server, TCP/IP",
        "https://example.com/a/b.py and http://x.org/y.md",
        "github.com/owner/repo.py, docs.python.org/3/",
        "/etc/hosts and ~/notes.md and `/usr/bin/env`",
        "`Memory.tidy` and `memdir.tidy` and Node.js",
        "`*.py`, `<id>.md`, `$HOME/x.py`, `{a,b}.py`",
        "1/2 of 2024/01/02, version 3.11",
        "README.md mentioned bare",
        "```\ncat src/generated/out.py\n```",
    ],
)
def test_look_alikes_are_not_paths(text: str) -> None:
    assert path_mentions(text) == []

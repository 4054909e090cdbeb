"""Tool errors as an agent reads them: the kind first and once (`invalid:`, `not_found:`,
`refused:`, `conflict:`, …), memdir's message, and the next step in MCP terms; a wrong
argument type in one short line instead of a pydantic dump."""

from __future__ import annotations

import importlib
import pkgutil
import random
import string
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_helpers import make_grant, stdio_params

import memdir
from mcp import Client
from memdir import Memory
from memdir.errors import Busy, Conflict, DiskError, MemdirError, NotFound, Remedy, SecretRefused
from memdir.mcp.failures import ErrorKind, ToolArguments, error_text, kind_of, remedy_text
from memdir.mcp.tools import TOOLS


def _every_error_class() -> list[type[MemdirError]]:
    for module in pkgutil.walk_packages(memdir.__path__, "memdir."):
        if not module.name.startswith(("memdir.server", "memdir.cli", "memdir.__main__")):
            importlib.import_module(module.name)
    found: list[type[MemdirError]] = []
    todo: list[type[MemdirError]] = [MemdirError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(found) - {MemdirError}, key=lambda c: c.__qualname__)


@pytest.mark.parametrize("cls", _every_error_class(), ids=lambda c: c.__qualname__)
def test_every_memdir_error_class_has_a_kind(cls: type[MemdirError]) -> None:
    # Only the extraction model's failures never reach an MCP tool (extraction is not one).
    if cls.__module__.startswith("memdir.extract"):
        return
    assert kind_of(cls.__new__(cls)) is not ErrorKind.INTERNAL, cls


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (
            NotFound("no note a-1"),
            "not_found: no note a-1 (memory_search finds notes and their ids)",
        ),
        (
            Conflict("note a-1 changed since it was read; nothing was written"),
            "conflict: note a-1 changed since it was read; nothing was written "
            "(call memory_read again and retry with what it returns now)",
        ),
        (
            Busy("another process holds the lock"),
            "busy: another process holds the lock "
            "(another memdir process is writing: call the tool again in a moment)",
        ),
        (
            DiskError("the disk is full", hint=Remedy.DOCTOR),
            f"disk: the disk is full ({remedy_text(Remedy.DOCTOR)})",
        ),
        (
            SecretRefused(
                "refused: this looks like a GitHub token (body, line 1); nothing was written."
            ),
            "refused: the credential guard found a secret: this looks like a GitHub token "
            "(body, line 1); nothing was written.",
        ),
    ],
)
def test_the_kind_comes_first_and_once(error: MemdirError, text: str) -> None:
    assert error_text(error) == text


def _arguments() -> ToolArguments:
    return ToolArguments.of(TOOLS)


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        (
            "memory_search",
            {"query": "x", "limit": "abc"},
            "invalid: limit: expected an integer from 1 to 50",
        ),
        (
            "memory_search",
            {"query": "x", "limit": 0},
            "invalid: limit: expected an integer from 1 to 50",
        ),
        ("memory_search", {}, "invalid: query: required"),
        ("memory_search", {"query": 5}, "invalid: query: expected a string"),
        (
            "memory_search",
            {"query": "x", "mode": "some"},
            "invalid: mode: expected 'any', 'all' or 'phrase'",
        ),
        (
            "memory_write",
            {"summary": "x", "tags": "a"},
            "invalid: tags: expected a list of strings, or null",
        ),
        ("memory_write", {"summary": "x", "tags": ["a", 3]}, "invalid: tags[1]: expected a string"),
        (
            "memory_delete",
            {"id": "a", "confirm": "maybe"},
            "invalid: confirm: expected true or false",
        ),
        ("memory_merge", {"ids": ["a"]}, "invalid: ids: expected a list of 2 to 20 strings"),
        (
            "memory_tidy",
            {"kinds": ["odd"]},
            "invalid: kinds[0]: expected 'same_topic', 'broken_link', 'missing_file', "
            "'unused', 'too_long' or 'contradiction'",
        ),
    ],
)
def test_a_wrong_argument_is_said_in_one_line(
    tool: str, arguments: dict[str, Any], problem: str
) -> None:
    assert _arguments().problem(tool, arguments) == problem


def test_right_arguments_pass_as_the_sdk_takes_them() -> None:
    checker = _arguments()
    assert checker.problem("memory_search", {"query": "x", "limit": "5"}) is None  # lax, as the SDK
    assert (
        checker.problem("memory_write", {"summary": "x", "tags": '["a", "b"]'}) is None
    )  # JSON text
    assert checker.problem("no_such_tool", {}) is None  # the SDK answers unknown tools


async def _texts(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    out = []
    for name, args in calls:
        result = await client.call_tool(name, args)
        assert result.is_error, (name, args)
        out.append(" ".join(getattr(c, "text", "") for c in result.content))
    return out


def test_errors_over_stdio(env: tuple[Path, Path], memory: Memory, tmp_path: Path) -> None:
    project, home = env
    note = memory.remember("Deploys go through staging", "body").note.id
    token = "ghp_" + "".join(random.Random(3).choices(string.ascii_letters + string.digits, k=36))
    grant = tmp_path / "read.grant"
    make_grant(memory, grant)

    async def main() -> list[str]:
        async with Client(stdio_params(project, home)) as client:
            texts = await _texts(
                client,
                [
                    ("memory_write", {"summary": "Deploy key", "body": f"use {token}"}),
                    ("memory_search", {"query": "x", "limit": "abc"}),
                    ("memory_read", {"id": "no-such-note"}),
                    ("memory_delete", {"id": note}),
                    ("memory_read_revision", {"id": note, "revision": "ffff"}),
                ],
            )
        async with Client(stdio_params(project, home, "--grant-file", str(grant))) as client:
            texts += await _texts(client, [("memory_write", {"summary": "A new fact"})])
        return texts

    texts = anyio.run(main)
    for text in texts:
        assert "Error executing tool" not in text and "validation error" not in text, text
        assert text.split(":", 1)[0] in {k.value for k in ErrorKind}, text
    assert texts[0].startswith("refused: the credential guard found a secret: this looks like")
    assert texts[0].count("refused") == 1 and token not in texts[0]
    assert texts[1] == "invalid: limit: expected an integer from 1 to 50"
    assert texts[2] == "not_found: no note no-such-note (memory_search finds notes and their ids)"
    assert texts[3].startswith("refused: memory_delete needs confirm: true")
    assert texts[4].startswith("not_found: ")
    assert texts[5].startswith("refused: memory_write writes notes, which is not allowed: grant ")
    assert texts[5].endswith(f"({remedy_text(Remedy.MCP_GRANT)})")

"""Every closed set of words the CLI offers comes from the vocabulary (memdir.core.vocab)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

import click
import pytest

from memdir.cli.main import main
from memdir.clients import grants
from memdir.core.vocab import (
    DraftKind,
    ExportFormat,
    FindingKind,
    ImportKind,
    KeepSide,
    NoteType,
    Scope,
    SearchMethod,
    SearchMode,
    StorageBackend,
    TeamRole,
    choices,
)

#: Option name → the vocabulary its choices must equal.
VOCABULARY: dict[str, type[StrEnum]] = {
    "mode": SearchMode,
    "method": SearchMethod,
    "scope": Scope,
    "type_": NoteType,
    "keep": KeepSide,
    "kinds": FindingKind,
    "kind": ImportKind,
    "fmt": ExportFormat,
    "draft": DraftKind,
    "backend": StorageBackend,
    "role": TeamRole,
}


def _choice_options(
    command: click.Command, path: tuple[str, ...]
) -> Iterator[tuple[str, click.Option, click.Choice]]:
    for param in command.params:
        if isinstance(param, click.Option) and isinstance(param.type, click.Choice):
            yield " ".join(path), param, param.type
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None
            yield from _choice_options(sub, (*path, name))


OPTIONS = list(_choice_options(main, ("memdir",)))


def test_choices_are_found() -> None:
    names = {param.name for _, param, _ in OPTIONS}
    assert {"mode", "method", "scope", "type_", "keep", "client", "backend"} <= names


@pytest.mark.parametrize(
    ("path", "param", "choice"), OPTIONS, ids=[f"{p} {o.name}" for p, o, _ in OPTIONS]
)
def test_choice_comes_from_the_vocabulary(
    path: str, param: click.Option, choice: click.Choice
) -> None:
    if path == "memdir mcp grant" and param.name == "state":
        # The state tools' access: the read and read_write access levels, no delete.
        assert tuple(choice.choices) == grants.STATE_ACCESS
        return
    if path == "memdir mcp grant" and param.name == "scope":
        # A grant covers one scope or both (the grants' own words).
        assert tuple(choice.choices) == grants.GRANT_SCOPES
        return
    vocabulary = VOCABULARY.get(param.name or "")
    if vocabulary is None:
        # Not a vocabulary word (the MCP client).
        assert param.name == "client", f"{path} {param.name}: which vocabulary?"
        return
    assert tuple(choice.choices) == choices(vocabulary)
    if param.default is not None and not param.multiple:  # a repeatable option has none
        assert param.default in choices(vocabulary)

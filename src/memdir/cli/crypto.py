"""`memdir encrypt | decrypt | passwd | unlock | lock`: encryption at rest (§8.2).

Passwords come from the terminal (typed without echo), from `--password-file FILE` (its
first line) or from `--password-stdin` (the first line of standard input) — never from
the command line or the environment, where `ps` and child processes would see them.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memdir.cli.errors import ErrorWithDetails
from memdir.cli.options import json_option
from memdir.cli.output import console, emit_json, progress_bar
from memdir.core import Scope
from memdir.core.vocab import choices
from memdir.errors import InvalidInput, MemdirError

if TYPE_CHECKING:
    from memdir import Memory
    from memdir.memory.encryption import EncryptionStatus, EncryptReport

__all__ = ["decrypt", "encrypt", "lock", "passwd", "unlock"]

_MAX_PASSWORD_FILE = 64 * 1024


def _first_line(data: bytes, where: str) -> bytes:
    line = data.split(b"\n", 1)[0].removesuffix(b"\r")
    if not line:
        raise InvalidInput(f"{where} holds no password (its first line is empty)")
    return line


def _from_file(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_PASSWORD_FILE + 1)
    except OSError as exc:
        raise InvalidInput(f"cannot read the password file {path}: {exc.strerror}") from None
    if len(data) > _MAX_PASSWORD_FILE:
        raise InvalidInput(f"the password file {path} is too large to hold a password")
    return _first_line(data, f"the password file {path}")


class _Stdin:
    """The lines of standard input, read once (a password, then maybe a new one)."""

    def __init__(self) -> None:
        self._lines: list[bytes] | None = None

    def line(self, index: int, what: str) -> bytes:
        if self._lines is None:
            data = sys.stdin.buffer.read(_MAX_PASSWORD_FILE + 1)
            if len(data) > _MAX_PASSWORD_FILE:
                raise InvalidInput("standard input is too large to hold a password")
            self._lines = [ln.removesuffix(b"\r") for ln in data.split(b"\n")]
        if index >= len(self._lines) or not self._lines[index]:
            raise InvalidInput(f"standard input has no {what} on line {index + 1}")
        return self._lines[index]


def _prompt(text: str, *, confirm: bool = False) -> bytes:
    if not sys.stdin.isatty():
        raise InvalidInput(
            "no password given: type it at a terminal, or use --password-file FILE or "
            "--password-stdin (never on the command line)"
        )
    value: str = click.prompt(text, hide_input=True, confirmation_prompt=confirm, err=True)
    if not value:
        raise InvalidInput("the password is empty")
    return value.encode("utf-8")


def _password(
    file: Path | None, stdin: _Stdin | None, text: str, *, line: int = 0, confirm: bool = False
) -> bytes:
    if file is not None:
        return _from_file(file)
    if stdin is not None:
        return stdin.line(line, "password")
    return _prompt(text, confirm=confirm)


def _recovery(file: Path | None, stdin: _Stdin | None) -> str:
    if file is not None:
        return _from_file(file).decode("utf-8", errors="replace")
    if stdin is not None:
        return stdin.line(0, "recovery key").decode("utf-8", errors="replace")
    return _prompt("Recovery key").decode("utf-8")


password_file = click.option(
    "--password-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the password from the first line of FILE.",
)
password_stdin = click.option(
    "--password-stdin", is_flag=True, help="Read the password from the first line of stdin."
)
scope_option = click.option(
    "--scope",
    multiple=True,
    type=click.Choice(choices(Scope)),
    help="Only this scope (repeatable; default: every open scope).",
)


def _scopes(names: tuple[str, ...]) -> list[Scope] | None:
    from memdir.core import parse_scope

    chosen = [parse_scope(n) for n in names]
    return [s for s in chosen if s is not None] or None


def _memory() -> Memory:
    memory: Memory = click.get_current_context().obj.memory()
    return memory


def _print_status(status: EncryptionStatus) -> None:
    if not status.keyring:
        console.print("not encrypted: this memdir home has no keyring")
    else:
        state = "unlocked" if status.unlocked else "locked"
        left = f", locks after {status.idle_left:.0f} s without use" if status.idle_left else ""
        console.print(f"keyring {status.key_id}: {state}{left}", markup=False)
    for scope in status.scopes:
        console.print(f"  {scope.scope.value:8} {scope.state:11} {scope.path}", markup=False)


def _print_report(report: EncryptReport, verb: str) -> None:
    scopes = ", ".join(s.scope.value for s in report.scopes) or "no scope"
    console.print(
        f"{verb} {scopes}: {report.notes} notes, {report.objects} history objects, "
        f"{report.backups} backups converted in {report.seconds:.1f} s",
        markup=False,
    )
    for path in report.plain:
        console.print(
            f'not encrypted: {path} (the agent state store; see "What stays plain" in '
            "docs/encryption.md)",
            markup=False,
        )
    if report.recovery_key:
        _print_recovery(report.recovery_key)


def _print_recovery(key: str) -> None:
    console.print(
        "[bold]Recovery key[/] (shown only now; keep it apart from the password — "
        "without either of them, the notes cannot be read):"
    )
    console.print(f"  {key}\n", markup=False)


@click.command()
@scope_option
@password_file
@password_stdin
@click.option("--status", "show_status", is_flag=True, help="Only show what is encrypted.")
@json_option
def encrypt(
    scope: tuple[str, ...],
    password_file: Path | None,
    password_stdin: bool,
    show_status: bool,
    as_json: bool,
) -> None:
    """Encrypt the notes, their history and backups at rest (resumes one that was stopped).

    The first time, it asks for a new password and prints a recovery key once. Afterwards
    the store is unlocked for 15 minutes of inactivity (`memdir lock` ends it). A lost
    password and recovery key lose the notes: there is no other way in.
    """
    memory = _memory()
    if show_status:
        status = memory.crypto.status()
        emit_json(status) if as_json else _print_status(status)
        return
    stdin = _Stdin() if password_stdin else None
    current = memory.crypto.status()
    password = None
    recovery = None
    if not current.keyring:
        new = _password(password_file, stdin, "New password", confirm=True)
        recovery = memory.crypto.create_keyring(new)
        if not as_json:  # shown before converting, so that no failure later can lose it
            _print_recovery(recovery)
    elif not current.unlocked or password_file is not None or stdin is not None:
        password = _password(password_file, stdin, "Password")
    try:
        with progress_bar(not as_json) as progress:
            report = memory.crypto.encrypt(password, _scopes(scope), progress=progress)
    except MemdirError as error:
        if recovery is None or not as_json:
            raise
        raise ErrorWithDetails(error, recoveryKey=recovery) from error
    if as_json:
        emit_json(dataclasses.replace(report, recovery_key=recovery))
    else:
        _print_report(report, "encrypted")


@click.command()
@scope_option
@password_file
@password_stdin
@json_option
def decrypt(
    scope: tuple[str, ...], password_file: Path | None, password_stdin: bool, as_json: bool
) -> None:
    """Convert encrypted notes, history and backups back to plain files."""
    memory = _memory()
    stdin = _Stdin() if password_stdin else None
    if not memory.crypto.status().unlocked or password_file or stdin:
        memory.crypto.unlock(_password(password_file, stdin, "Password"))
    with progress_bar(not as_json) as progress:
        report = memory.crypto.decrypt(_scopes(scope), progress=progress)
    emit_json(report) if as_json else _print_report(report, "decrypted")


@click.command()
@password_file
@click.option(
    "--new-password-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the new password from the first line of FILE.",
)
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the current password (line 1) and the new one (line 2) from stdin.",
)
@click.option("--recovery", is_flag=True, help="Prove it with the recovery key, not the password.")
@json_option
def passwd(
    password_file: Path | None,
    new_password_file: Path | None,
    password_stdin: bool,
    recovery: bool,
    as_json: bool,
) -> None:
    """Change the password (the notes are not re-encrypted: it wraps the same key)."""
    memory = _memory()
    stdin = _Stdin() if password_stdin else None
    if recovery:
        key = _recovery(password_file, stdin)
        new = _password(new_password_file, stdin, "New password", line=1, confirm=True)
        memory.crypto.passwd(new, recovery_key=key)
    else:
        old = _password(password_file, stdin, "Current password")
        new = _password(new_password_file, stdin, "New password", line=1, confirm=True)
        memory.crypto.passwd(new, old_password=old)
    if as_json:
        emit_json({"changed": True})
    else:
        console.print("password changed")


@click.command()
@password_file
@password_stdin
@click.option("--recovery", is_flag=True, help="Unlock with the recovery key.")
@click.option(
    "--idle",
    type=click.FloatRange(min=1, max=7 * 24 * 3600),
    default=900,
    show_default=True,
    help="Lock again after this many seconds without use.",
)
@json_option
def unlock(
    password_file: Path | None, password_stdin: bool, recovery: bool, idle: float, as_json: bool
) -> None:
    """Unlock the encrypted notes until IDLE seconds pass without use (default 15 minutes)."""
    memory = _memory()
    stdin = _Stdin() if password_stdin else None
    if recovery:
        status = memory.crypto.unlock(
            recovery_key=_recovery(password_file, stdin), idle_seconds=idle
        )
    else:
        status = memory.crypto.unlock(
            _password(password_file, stdin, "Password"), idle_seconds=idle
        )
    emit_json(status) if as_json else _print_status(status)


@click.command()
@json_option
def lock(as_json: bool) -> None:
    """Lock the encrypted notes now: the key and the in-memory index are wiped."""
    memory = _memory()
    ended = memory.crypto.lock()
    if as_json:
        emit_json({"locked": True, "wasUnlocked": ended})
    else:
        console.print("locked" if ended else "was not unlocked")

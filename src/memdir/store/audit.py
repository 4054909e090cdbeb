"""Append-only, hash-chained JSON-lines audit log of every write, forget, restore, purge and grant.

Design. ``audit.jsonl`` holds one compact JSON object per line (keys: seq, ts, action, fields,
prev, hash). ``hash`` is the SHA-256 of the canonical JSON (sorted keys, compact separators,
``ensure_ascii=False``) of the other five keys; ``prev`` is the previous entry's ``hash`` (64
zeros first), so an edited, removed, reordered or inserted line breaks the chain. ``audit.head``
(replaced atomically after each append) names the newest entry, so a truncated tail is detected
relative to it. Appends serialise on ``audit.lock`` (``fcntl.flock``). Entries hold ids, hashes,
counts and short reasons: keys are whitelisted, values are short scalars, and ``detail`` is free
text in which callers must never put note content or secrets.

Signed head. The head carries the Ed25519 signature of its seq, hash and time by the machine key
(``audit.key`` beside the log; format and key handling in memdir.store.signing); signature and
head are one file, so the same atomic rename replaces both. Verify checks the signature against
this machine's key, so a head rewritten to match a truncated or recomputed log is detected by
anyone who cannot read the key. ``audit.key`` exists only once a head it signed was written, so
a missing or unsigned head beside it is a rewritten head; with no key, an unsigned head is a
legacy one (written before heads were signed), reported ``unsigned`` as a warning and signed by
the next append. An append that finds the head failing its check does not sign over it (that
would erase the evidence): it writes unsigned heads from then on, which verify keeps reporting
while ``audit.key`` exists. `AuditHead`, printed by ``memdir audit head``, can be kept elsewhere
and passed back to `AuditLog.verify` as ``against``: the log must still hold that entry and be
at least that long, and this machine's key must be the one that signed it, which detects a
rollback to an older, internally consistent log.

Crash recovery. An append writes its line with one ``os.write`` (``O_APPEND``), fsyncs, and only
then replaces the head, so a crash leaves at worst (a) a final fragment without a newline (a
torn line) that the head does not name, or (b) the last append's lines (one batch, one ``ts``)
that the head does not name yet. Both are harmless: readers ignore a final fragment, and the
next append moves it to ``audit.jsonl.torn-<ts>`` (kept, never deleted); it signs a head naming
an unheaded batch before it writes its own lines, so two kills in a row still leave one batch.
Verify reports a fragment only through its consequence: a head naming an entry the log lacks
(truncation). The head is never ahead of the log by construction, so when it is (or disagrees
with the log's last entry) the next append chains from the head, keeping the damage visible to
every later verify.

Limits. Anyone who can read ``audit.key`` (this user, root) can re-sign a rewritten head, and
whoever deletes the key and the signature leaves a legacy-looking unsigned head: the signature
shows the head was written by a holder of this machine's key, not that the log is complete. A
head kept elsewhere (``against``) is what detects those rollbacks. See docs/audit.md.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import math
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, TypeGuard

from memdir.errors import Busy, IntegrityError, InvalidInput, NotFound, Remedy
from memdir.files.atomic import fsync_dir as _fsync_dir
from memdir.files.atomic import open_lock_file
from memdir.store.rollback import Rollback
from memdir.store.signing import (
    KEY_NAME,
    AuditHead,
    MachineKey,
    head_bytes,
    head_payload,
    load_head,
    load_object,
    parse_head,
    saved_head_problems,
    signature_problem,
)

# fmt: off
__all__ = [
    "ACTIONS",
    "CONTENT_FIELDS",
    "FIELDS",
    "GENESIS",
    "MAX_VALUE_CHARS",
    "AuditEntry",
    "AuditHead",
    "AuditLog",
    "AuditReport",
    "AuditVerification",
    "SignatureState",
    "load_head",
]


@dataclass(frozen=True, slots=True)
class AuditReport:
    """What ``AuditLog.verify`` found; ``head_seq``/``head_hash`` name the log's last entry."""

    ok: bool
    entries: int
    head_seq: int
    head_hash: str
    problems: tuple[str, ...]

    def raise_if_failed(self) -> None:
        """Raise IntegrityError listing the problems, for callers that want an exception."""
        if not self.ok:
            raise IntegrityError("audit log failed verification: " + "; ".join(self.problems))


#: How a head's signature stands: ``signed`` (checks against this machine's key), ``unsigned``
#: (a legacy head and no key: a warning), ``invalid`` (a failure), ``absent`` (no head).
SignatureState = Literal["signed", "unsigned", "invalid", "absent"]


@dataclass(frozen=True, slots=True)
class AuditVerification(AuditReport):
    """What ``AuditLog.verify`` found, with the head's signature state, the key it was checked
    against (this machine's public key, None when it has none) and warnings that do not fail
    verification (a legacy unsigned head)."""

    signature: SignatureState
    key: str | None
    warnings: tuple[str, ...]
ACTIONS = frozenset({
    "write", "delete", "forget", "purge", "restore", "backup", "import", "grant", "revoke",
    "sync-commit", "merge", "encrypt", "decrypt", "ask",
})
#: The only keys an entry may carry. ``detail`` is free text: never put content or secrets in it.
FIELDS = frozenset({
    "scope", "note_id", "revision", "note_hash", "backup_id", "reason", "origin", "count",
    "grant_id", "detail", "question_hash",
})
# fmt: on
#: Refused with a pointed message: the audit log never holds note content.
CONTENT_FIELDS = frozenset({"body", "summary", "content", "text"})
MAX_VALUE_CHARS = 512
GENESIS = "0" * 64

_log = logging.getLogger("memdir.store")
_TORN = "audit.jsonl.torn-"
_MISSING_SIGNED_HEAD = "head file is missing, but this machine's audit key signed one (deleted)"
_UNSIGNED_HEAD = (
    "head file is unsigned: it was written before memdir signed audit heads; "
    "the next write signs it"
)
_ENTRY_KEYS = ("seq", "ts", "action", "fields", "prev", "hash")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
_POLL_SECONDS = 0.02
_TAIL_CHUNK = 64 * 1024

Fields = Mapping[str, str | int | None]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the log; ``hash`` covers every other attribute."""

    seq: int
    ts: int
    action: str
    fields: Fields
    prev: str
    hash: str


def _head_state(
    head: AuditHead | None,
    head_problem: str | None,
    lines: int,
    machine: str | None,
    committed: bool,
) -> tuple[SignatureState, list[str], list[str]]:
    """How the head's signature stands, with problems and warnings, for a log holding
    ``lines`` lines past its first batch (the entries of the first append, one ``ts``)."""
    if head_problem is not None:
        return "invalid", [head_problem], []
    if head is None and committed:
        # audit.key is committed only after a head it signed was written: not a crash.
        return "absent", [_MISSING_SIGNED_HEAD], []
    if head is None:
        # Only the very first append can crash between writing the log and the head, so a
        # log of one batch (``lines`` counts those past it) without a head is that crash.
        missing = "head file is missing but the log holds more than its first batch (deleted)"
        return "absent", [missing] if lines > 0 else [], []
    if (problem := signature_problem(head, machine, committed)) is not None:
        return "invalid", [problem], []
    if head.signed:
        return "signed", [], []
    return "unsigned", [], [_UNSIGNED_HEAD]


def _is_int(value: object) -> TypeGuard[int]:
    return type(value) is int  # not bool


def _canonical(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _body(seq: int, ts: int, action: str, fields: Fields, prev: str) -> dict[str, object]:
    """The hashed part of an entry, keys in storage order."""
    fields = dict(sorted(fields.items()))
    return {"seq": seq, "ts": ts, "action": action, "fields": fields, "prev": prev}


def _hash(body: dict[str, object]) -> str:
    return hashlib.sha256(_canonical(body)).hexdigest()


def _line(entry: AuditEntry) -> bytes:
    """The exact bytes an entry is stored as, trailing newline included."""
    obj = _body(entry.seq, entry.ts, entry.action, entry.fields, entry.prev)
    obj["hash"] = entry.hash
    return (json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _field_problem(key: str, value: object) -> str | None:
    """Why ``key=value`` may not be in an entry, or None when it may."""
    if key in CONTENT_FIELDS:
        return f"field {key!r} refused: audit entries never hold note content"
    if key not in FIELDS:
        return f"unknown audit field {key!r} (allowed: {', '.join(sorted(FIELDS))})"
    if value is None:
        return None
    if _is_int(value):
        ok = _INT_MIN <= value <= _INT_MAX
        return None if ok else f"field {key!r} is out of the 64-bit integer range"
    if not isinstance(value, str):
        return f"field {key!r} must be str, int or None, not {type(value).__name__}"
    if len(value) > MAX_VALUE_CHARS:
        return f"field {key!r} is {len(value)} characters long (at most {MAX_VALUE_CHARS})"
    try:
        value.encode()
    except UnicodeEncodeError:
        return f"field {key!r} is not encodable as UTF-8"
    return None


def _parse_entry(line: bytes) -> AuditEntry:
    """Parse one stored line (without its newline); ValueError says what is wrong."""
    obj = load_object(line, "line")
    if set(obj) != set(_ENTRY_KEYS):
        raise ValueError(f"not an audit entry (keys must be {', '.join(_ENTRY_KEYS)})")
    seq, ts, action, fields, prev, digest = (obj[key] for key in _ENTRY_KEYS)
    if not _is_int(seq) or seq < 1 or not _is_int(ts) or ts < 0:
        raise ValueError("seq and ts must be integers, seq from 1 and ts from 0")
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    if not isinstance(fields, dict):
        raise ValueError("fields must be an object")
    for key, value in fields.items():
        if (problem := _field_problem(key, value)) is not None:
            raise ValueError(problem)
    if not all(isinstance(h, str) and _HEX64.fullmatch(h) for h in (prev, digest)):
        raise ValueError("prev and hash must be 64 lowercase hex digits")
    return AuditEntry(seq, ts, action, MappingProxyType(dict(sorted(fields.items()))), prev, digest)


def _link_problems(entry: AuditEntry, line: bytes, seq: int, prev: str | None) -> list[str]:
    """What is wrong with ``entry``, stored as ``line``, where ``seq``/``prev`` were due."""
    problems: list[str] = []
    if _hash(_body(entry.seq, entry.ts, entry.action, entry.fields, entry.prev)) != entry.hash:
        problems.append("entry hash does not match its content (edited)")
    elif _line(entry) != line + b"\n":
        problems.append("entry is not in canonical form (edited)")
    if entry.seq > seq:
        problems.append(f"seq {seq} expected, found {entry.seq} (entries removed)")
    elif entry.seq < seq:
        problems.append(f"seq {seq} expected, found {entry.seq} (entries reordered or duplicated)")
    if prev is not None and entry.prev != prev:
        problems.append(
            "prev does not name the hash of the entry before it "
            "(entries removed, reordered or inserted)"
        )
    return problems


def _read_tail(fd: int, size: int) -> tuple[bytes | None, bytes]:
    """Read back from ``size``: the last complete line (None if none) and the torn fragment."""
    pos, buf = size, b""
    while pos > 0:
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        buf = os.pread(fd, step, pos) + buf
        last_nl = buf.rfind(b"\n")
        if last_nl >= 0 and (pos == 0 or buf.rfind(b"\n", 0, last_nl) >= 0):
            return buf[buf.rfind(b"\n", 0, last_nl) + 1 : last_nl], buf[last_nl + 1 :]
    return None, buf


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (0600, must not exist) holding ``data``, fsynced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


class AuditLog:
    """The audit log in ``directory`` ($MEMDIR_HOME/audit), created 0700 on the first append.

    ``key`` signs and checks the head; by default the machine key ``audit.key`` in ``directory``.
    """

    def __init__(
        self,
        directory: Path,
        *,
        lock_timeout: float = 10.0,
        clock: Callable[[], int] | None = None,
        key: MachineKey | None = None,
    ) -> None:
        if not 0 <= lock_timeout < math.inf:
            raise InvalidInput(f"lock_timeout must be a finite number >= 0, not {lock_timeout!r}")
        self.directory = Path(directory)
        self.log_path = self.directory / "audit.jsonl"
        self.head_path = self.directory / "audit.head"
        self.lock_path = self.directory / "audit.lock"
        self.lock_timeout = float(lock_timeout)
        self.key = key if key is not None else MachineKey(self.directory / KEY_NAME)
        self._clock = clock if clock is not None else lambda: time.time_ns() // 1_000_000

    # -- writing ------------------------------------------------------------------------------

    def append(self, action: str, **fields: str | int | None) -> AuditEntry:
        """Add one entry under the cross-process lock and return it; durable on return."""
        return self.append_many([(action, fields)])[0]

    def append_many(
        self,
        items: Sequence[tuple[str, Mapping[str, str | int | None]]],
        *,
        rollback: Rollback | None = None,
    ) -> list[AuditEntry]:
        """Add several entries in order with one write and one fsync; durable on return.

        `rollback` (the write these entries record) is sealed as soon as they are durable.
        """
        checked: list[tuple[str, dict[str, str | int | None]]] = []
        for action, fields in items:
            if action not in ACTIONS:
                known = ", ".join(sorted(ACTIONS))
                raise InvalidInput(f"unknown audit action {action!r} (known: {known})")
            for key, value in fields.items():
                if (problem := _field_problem(key, value)) is not None:
                    raise InvalidInput(problem)
            checked.append((action, dict(sorted(fields.items()))))
        if not checked:
            return []
        if not self.directory.is_dir():
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.directory.chmod(0o700)
        with self._locked(exclusive=True):
            return self._append_locked(checked, rollback)

    def _append_locked(
        self, items: list[tuple[str, dict[str, str | int | None]]], rollback: Rollback | None
    ) -> list[AuditEntry]:
        created = not self.log_path.exists()
        fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        entries: list[AuditEntry] = []
        try:
            if created:
                _fsync_dir(self.directory)
            last_line = self._set_aside_torn(fd)
            head, head_problem = self._read_head()
            seq, prev = self._tip(last_line, head)
            # An unusable key refuses the append before anything is recorded (IntegrityError).
            sign = self._may_sign(head, head_problem)
            if sign and seq > (head.seq if head is not None else 0):
                # The last append was killed before its head: name its entries first, so that
                # a kill during this one still leaves only one batch the head does not name.
                assert last_line is not None  # _tip chained from it
                tail = _parse_entry(last_line)
                self._write_head(tail.seq, tail.hash, tail.ts, sign=True)
            ts = self._clock()
            if not _is_int(ts) or ts < 0:
                raise InvalidInput(f"audit clock must return Unix milliseconds, not {ts!r}")
            for action, fields in items:
                digest = _hash(_body(seq + 1, ts, action, fields, prev))
                entry = AuditEntry(seq + 1, ts, action, MappingProxyType(fields), prev, digest)
                entries.append(entry)
                seq, prev = entry.seq, entry.hash
            lines = b"".join(_line(entry) for entry in entries)
            self._write_lines(fd, lines)
            if rollback is not None:
                rollback.seal()
        finally:
            os.close(fd)
        try:
            self._write_head(entries[-1].seq, entries[-1].hash, ts, sign=sign)
        except OSError as exc:
            # The entries are durable; a head one batch behind is what a crash here leaves,
            # and the next append names them (see Crash recovery above).
            _log.warning("audit head not updated: %s", exc.strerror or exc)
        return entries

    def _write_lines(self, fd: int, lines: bytes) -> None:
        """Append `lines` durably, or leave the log as it was: a write or fsync that fails
        (a full disk, an I/O error) has its bytes cut off again, so a refused append records
        nothing (no free space is needed for that)."""
        size = os.fstat(fd).st_size
        try:
            if (written := os.write(fd, lines)) != len(lines):
                raise OSError(
                    errno.ENOSPC, f"short write to {self.log_path} ({written} of {len(lines)})"
                )
            os.fsync(fd)
        except BaseException:  # an interrupt too: lines not known durable are not recorded
            with contextlib.suppress(OSError):
                if size == 0:  # no entry ever got in: no log either
                    self.log_path.unlink()
                else:
                    os.ftruncate(fd, size)
                    os.fsync(fd)
            raise

    def _set_aside_torn(self, fd: int) -> bytes | None:
        """Move a torn final fragment to ``audit.jsonl.torn-<ts>``; return the last full line.

        The copy is durable before the log is truncated: a crash in between leaves two copies.
        """
        size = os.fstat(fd).st_size
        last_line, torn = _read_tail(fd, size)
        if torn:
            aside = self.directory / f"{_TORN}{self._clock()}"
            if aside.exists():
                aside = aside.with_name(f"{aside.name}-{secrets.token_hex(4)}")
            _write_new(aside, torn)
            _fsync_dir(self.directory)
            os.ftruncate(fd, size - len(torn))
            os.fsync(fd)
        return last_line

    def _may_sign(self, head: AuditHead | None, head_problem: str | None) -> bool:
        """Whether the new head may be signed: not when the current one fails its check against
        a key that signed before, since signing over it would erase the evidence. Every later
        head is then written unsigned, which verify keeps reporting while ``audit.key`` exists.
        An unusable key file raises IntegrityError.
        """
        machine = self.key.public_key()
        if not self.key.committed():
            return True  # nothing was signed yet (a new or legacy log): sign from now on
        if head is None or head_problem is not None:
            return False
        return signature_problem(head, machine, True) is None

    def _tip(self, last_line: bytes | None, head: AuditHead | None) -> tuple[int, str]:
        """Seq and hash to chain from: the log's last entry, unless the head names one at or past
        it (the log lost or rewrote entries); chaining from the head then keeps that visible."""
        log_tip: tuple[int, str] | None = None
        if last_line is not None:
            try:
                last = _parse_entry(last_line)
            except ValueError as exc:
                if head is None:
                    raise IntegrityError(
                        f"cannot append: the last line of {self.log_path} is not an audit entry "
                        f"({exc}) and there is no head to chain from",
                        hint=Remedy.AUDIT_VERIFY,
                    ) from exc
            else:
                log_tip = (last.seq, last.hash)
        if head is not None and (log_tip is None or head.seq >= log_tip[0]):
            return head.seq, head.hash
        return log_tip if log_tip is not None else (0, GENESIS)

    def _write_head(self, seq: int, digest: str, ts: int, *, sign: bool) -> None:
        """Sign and replace ``audit.head`` atomically (temp file, fsync, rename, fsync the
        directory), then commit a newly made key: ``audit.key`` never predates a head it signed."""
        head = AuditHead(seq, digest)
        if sign:
            key, sig = self.key.sign(head_payload(seq, digest, ts))
            head = AuditHead(seq, digest, ts, key, sig)
        tmp = self.directory / f".audit.head.tmp-{secrets.token_hex(4)}"
        try:
            _write_new(tmp, head_bytes(head))
            tmp.replace(self.head_path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        _fsync_dir(self.directory)
        if sign:
            self.key.commit()

    @contextlib.contextmanager
    def _locked(self, *, exclusive: bool) -> Iterator[None]:
        """Hold ``audit.lock``; readers share it, and skip it if no append ever made it."""
        if not exclusive and not self.lock_path.exists():
            yield  # readers create nothing; once made, the lock file is never removed
            return
        deadline = time.monotonic() + self.lock_timeout
        fd = open_lock_file(self.lock_path, create=exclusive)
        try:
            # flock excludes every other open file description, threads of this process too.
            mode = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB
            while True:
                with contextlib.suppress(BlockingIOError):
                    fcntl.flock(fd, mode)
                    break
                if time.monotonic() >= deadline:
                    raise Busy(
                        f"another memdir process is writing the audit log; gave up after "
                        f"{self.lock_timeout:g} s (lock file {self.lock_path}). "
                        "Try again when it has finished."
                    )
                time.sleep(_POLL_SECONDS)
            yield
        finally:
            os.close(fd)

    # -- reading ------------------------------------------------------------------------------

    def _read_head(self) -> tuple[AuditHead | None, str | None]:
        """(head, None); (None, None) when there is no head; (None, problem) when unreadable."""
        try:
            return parse_head(self.head_path.read_bytes()), None
        except FileNotFoundError:
            return None, None
        except ValueError as exc:
            return None, f"{exc} (edited)"

    def _read_log(self) -> bytes | None:
        try:
            return self.log_path.read_bytes()
        except FileNotFoundError:
            return None

    def entries(self) -> list[AuditEntry]:
        """All entries in file order, skipping a torn final fragment; hashes are not checked.

        Raises IntegrityError on a complete line that is not an audit entry."""
        result: list[AuditEntry] = []
        for number, line in enumerate((self._read_log() or b"").split(b"\n")[:-1], 1):
            try:
                result.append(_parse_entry(line))
            except ValueError as exc:
                raise IntegrityError(f"{self.log_path} line {number}: {exc}") from exc
        return result

    def head(self) -> AuditHead:
        """The head as stored, once its signature checks against this machine's key.

        NotFound when nothing was logged yet; IntegrityError when the head cannot be vouched for
        (unreadable, unsigned though this machine has signed before, or signed by another key).
        A legacy unsigned head is returned as it is (``signed`` False)."""
        with self._locked(exclusive=False):  # the head and the key as one append left them
            head, head_problem = self._read_head()
            try:
                machine, committed = self.key.public_key(), self.key.committed()
            except IntegrityError as exc:
                raise IntegrityError(str(exc), hint=Remedy.AUDIT_VERIFY) from None
        _, problems, _ = _head_state(head, head_problem, 0, machine, committed)
        if problems:
            raise IntegrityError(f"{self.head_path}: {problems[0]}", hint=Remedy.AUDIT_VERIFY)
        if head is None:
            raise NotFound("the audit log has no head yet: nothing has been recorded")
        return head

    def verify(self, against: AuditHead | Path | None = None) -> AuditVerification:
        """Check every hash and link, the log against the head and the head's signature against
        this machine's key; with ``against`` (a head kept elsewhere, or a file holding one) also
        that the log has not been rolled back past it. Never raises on damage; InvalidInput
        when ``against`` names a file that does not hold a head."""
        saved = load_head(against) if isinstance(against, Path) else against
        key_problem: str | None = None
        with self._locked(exclusive=False):  # a consistent snapshot of head, log and key
            head, head_problem = self._read_head()
            raw = self._read_log()
            try:
                machine, committed = self.key.public_key(), self.key.committed()
            except IntegrityError as exc:
                machine, committed, key_problem = None, True, str(exc)
        problems = [] if key_problem is None else [key_problem]
        lines = (raw or b"").split(b"\n")[:-1]  # drops a torn final fragment
        by_seq: dict[int, AuditEntry] = {}
        last: AuditEntry | None = None
        parsed = 0
        expected_prev: str | None  # None: unknown after an unparseable line
        expected_seq, expected_prev = 1, GENESIS
        first_ts, first_batch = None, 0  # the first append's ts, and how many lines it wrote
        for number, line in enumerate(lines, 1):
            try:
                entry = _parse_entry(line)
            except ValueError as exc:
                problems.append(f"line {number}: {exc} (edited or corrupted)")
                expected_seq, expected_prev = expected_seq + 1, None
                continue
            links = _link_problems(entry, line, expected_seq, expected_prev)
            problems.extend(f"line {number}: {problem}" for problem in links)
            expected_seq, expected_prev = entry.seq + 1, entry.hash
            by_seq.setdefault(entry.seq, entry)
            parsed, last = parsed + 1, entry
            if entry.seq == 1:
                first_ts = entry.ts
            if entry.ts == first_ts and first_batch == number - 1:
                first_batch = number
        if key_problem is None:
            later = len(lines) - first_batch
            state, found, warnings = _head_state(head, head_problem, later, machine, committed)
            problems.extend(found)
        else:  # the head cannot be checked: the key problem is reported instead
            state, warnings = ("absent" if head is None else "invalid"), []
            problems.extend([] if head_problem is None else [head_problem])
        if head is not None:
            problems.extend(self._head_problems(head, raw, lines, by_seq))
        if saved is not None:
            hashes = {n: e.hash for n, e in by_seq.items()}
            problems.extend(
                saved_head_problems(saved, machine, hashes, key_known=key_problem is None)
            )
            if not saved.signed:
                warnings.append(
                    "the saved head is unsigned: it proves the log's entries, not the machine key"
                )
        seq, digest = (last.seq, last.hash) if last is not None else (0, GENESIS)
        return AuditVerification(
            not problems,
            parsed,
            seq,
            digest,
            tuple(problems),
            signature=state,
            key=machine,
            warnings=tuple(warnings),
        )

    def _head_problems(
        self,
        head: AuditHead,
        raw: bytes | None,
        lines: list[bytes],
        by_seq: Mapping[int, AuditEntry],
    ) -> list[str]:
        """Compare the log with the head file: truncation, rollback, an edited head."""
        problems: list[str] = []
        names = f"head file names seq {head.seq}"
        if raw is None:
            return [*problems, f"{names} but the log file is missing (deleted)"]
        if not lines:
            return [*problems, f"{names} but the log is empty (truncated)"]
        end = max(by_seq, default=0)
        match = by_seq.get(head.seq)
        if match is None and head.seq > end:
            problems.append(f"{names} but log ends at {end} (truncated)")
        elif match is None:
            problems.append(f"{names} but the log has no entry with that seq (removed)")
        elif match.hash != head.hash:
            problems.append(
                f"{names} with hash {head.hash[:12]}..., but entry {head.seq} has hash "
                f"{match.hash[:12]}... (head edited or entries rewritten)"
            )
        # One append's entries share one ts: a kill before its head leaves one such batch.
        if len({entry.ts for seq, entry in by_seq.items() if seq > head.seq}) > 1:
            problems.append(f"{names} but the log runs to {end} (head rolled back or edited)")
        return problems

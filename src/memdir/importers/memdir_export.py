"""Reading memdir's own export (a folder, ``.tar.gz``/``.tgz`` or ``.zip``) back into notes.

An export holds, in one top folder of any name or none::

    index.json          {"format": "memdir-export", "version": 1, "exported_at": ms,
                         "notes": [{"id", "scope", "path", "hash", "revision",
                                    "createdAt", "updatedAt", "summary", ...}]}
    project/<id>.md     note files, the bytes they had on disk (§1.1)
    user/<id>.md

A plain note folder is read too: a project's ``MEMORY/`` (or the project folder holding
it), or any folder of ``<id>.md`` note files, as a person copying another project's notes
has them. Its notes keep their ids; their scope comes from their type or ``--scope`` (a
folder does not say); a hand-written note (YAML frontmatter or plain Markdown) is read as
the store reads it, its file time filling missing timestamps; a file whose name is not a
note id, that does not parse, or that is encrypted (export it from its own memdir) is a
problem and is not imported.

Every note keeps its id, scope, type, tags, supersedes, private flag and timestamps, so
a re-import gives the same ids and content hashes. A listed file that is missing, does
not parse or whose hash differs from the index (changed or damaged since the export) is
a problem and is not imported; a note file under ``project/`` or ``user/`` that the
index does not list is read as it is. Unknown frontmatter keys are not carried (the
`Imported` record has no place for them; the content hash does not cover them).

Archives are never extracted: members are read into memory, and a member with an
absolute path, a ``..`` part or a backslash, a link or device, or one larger than
`MAX_SOURCE_BYTES` is refused; reading stops once `MAX_ARCHIVE_BYTES` have been
decompressed (a gzip or zip bomb costs that much and no more) or after `MAX_MEMBERS`
members.
"""

from __future__ import annotations

import gzip
import io
import json
import lzma
import os
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memdir.core import Note, Scope, parse_note, validate_id
from memdir.crypto.seal import is_sealed
from memdir.errors import InvalidInput, MemdirError
from memdir.importers.base import MAX_SOURCE_BYTES, Imported, Problem, Reading, iso_ms

__all__ = ["KIND", "MAX_ARCHIVE_BYTES", "MAX_MEMBERS", "detect", "read"]

KIND = "memdir"
INDEX_NAME = "index.json"
FORMAT = "memdir-export"
VERSION = 1
#: Bytes read from one export at most, uncompressed (the sum of its members read or skipped).
MAX_ARCHIVE_BYTES = 4 * MAX_SOURCE_BYTES
#: Members of one archive looked at, at most.
MAX_MEMBERS = 200_000
_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_HEAD_BYTES = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")
_NOTE_PATH = re.compile(r"^(project|user)/[^/]+\.md$")
#: What a damaged archive raises while it is read (zipfile and tarfile are not uniform).
_DAMAGED = (
    tarfile.TarError,
    zipfile.BadZipFile,
    OSError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)


class _TooLarge(Exception):
    """More than the archive cap was decompressed."""


class _Capped(io.RawIOBase):
    """A reader that fails once more than `limit` bytes came through it."""

    def __init__(self, raw: Any, limit: int) -> None:
        self._raw = raw
        self._left = limit

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        data: bytes = self._raw.read(want)
        self._left -= len(data)
        if self._left < 0:
            raise _TooLarge
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


@dataclass(slots=True)
class _Files:
    """The members read: normalised path -> bytes, and the problems met."""

    data: dict[str, bytes] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    used: int = 0
    #: Modification time (ms) of each file read from a folder.
    mtimes: dict[str, int] = field(default_factory=dict)
    #: A plain note folder (no index.json; files by their name alone).
    plain: bool = False


def _normalised(name: str) -> str | None:
    """The member's path without ``.`` parts, or None when it could point outside."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/") or _DRIVE.match(name):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def _wanted(name: str) -> bool:
    return name.endswith(".md") or name.rsplit("/", 1)[-1] == INDEX_NAME


def _admit(files: _Files, name: str, size: int, kind_ok: bool) -> str | None:
    """The normalised path to read `name` under, or None (a problem said why)."""
    path = _normalised(name)
    shown = name[:200]
    if path is None:
        files.problems.append(Problem(shown, "an absolute path or one leaving the export"))
        return None
    if not kind_ok:
        files.problems.append(Problem(shown, "a link or device, not a file; not read"))
        return None
    if not _wanted(path):
        return None
    if size > MAX_SOURCE_BYTES:
        files.problems.append(
            Problem(shown, f"{size} bytes, over the {MAX_SOURCE_BYTES} a source file may be")
        )
        return None
    return path


def _from_tar(path: Path, files: _Files) -> None:
    started = False
    try:
        with (
            gzip.open(path, "rb") as unzipped,
            tarfile.open(fileobj=_Capped(unzipped, MAX_ARCHIVE_BYTES), mode="r|") as archive,
        ):
            for count, member in enumerate(archive, 1):
                started = True
                if count > MAX_MEMBERS:
                    files.problems.append(
                        Problem(path.name, f"more than {MAX_MEMBERS} members; the rest not read")
                    )
                    return
                if member.isdir():
                    continue
                name = _admit(files, member.name, member.size, member.isfile())
                if name is None:
                    continue
                handle = archive.extractfile(member)
                if handle is not None:
                    # the size checked above; a larger request would be allocated up front
                    files.data[name] = handle.read(member.size)
    except _TooLarge:
        files.problems.append(_too_large(path))
    except _DAMAGED as exc:
        if not started:
            raise InvalidInput(f"{path.name} is not a readable tar.gz archive ({exc})") from None
        files.problems.append(Problem(path.name, f"damaged; the rest is not read ({exc})"))


def _too_large(path: Path) -> Problem:
    return Problem(path.name, f"over {MAX_ARCHIVE_BYTES} bytes uncompressed; the rest is not read")


def _from_zip(path: Path, files: _Files) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except _DAMAGED as exc:
        raise InvalidInput(f"{path.name} is not a readable zip archive ({exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            files.problems.append(
                Problem(path.name, f"more than {MAX_MEMBERS} members; the rest not read")
            )
        for info in infos[:MAX_MEMBERS]:
            if info.is_dir():
                continue
            kind = stat.S_IFMT(info.external_attr >> 16)
            name = _admit(files, info.filename, info.file_size, kind in (0, stat.S_IFREG))
            if name is None:
                continue
            if files.used + info.file_size > MAX_ARCHIVE_BYTES:
                files.problems.append(_too_large(path))
                return
            try:
                with archive.open(info) as handle:
                    data = handle.read(info.file_size)
            except _DAMAGED as exc:
                files.problems.append(Problem(info.filename[:200], f"cannot be read ({exc})"))
                continue
            files.used += len(data)
            files.data[name] = data


def _walk(base: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of the index and the note files of an export folder."""
    yield INDEX_NAME, base / INDEX_NAME
    for scope in Scope:
        folder = base / scope.value
        if folder.is_dir() and not folder.is_symlink():
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".md"):
                    yield f"{scope.value}/{entry.name}", Path(entry.path)


def _walk_notes(folder: Path) -> Iterator[tuple[str, Path]]:
    """(file name, path) of the note files of a plain note folder."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            yield entry.name, Path(entry.path)


def _note_folder(path: Path) -> Path | None:
    """The plain note folder at `path`: itself when it holds ``.md`` files, else its
    ``MEMORY/`` (a project folder); None when neither holds any."""
    for folder in (path, path / "MEMORY"):
        plain_dir = folder.is_dir() and (folder == path or not folder.is_symlink())
        if plain_dir and any(True for _ in _walk_notes(folder)):
            return folder
    return None


def _from_folder(base: Path, files: _Files, walk: Iterator[tuple[str, Path]]) -> None:
    for rel, file in walk:
        try:
            info = file.lstat()
        except OSError:
            continue
        if not _admit(files, rel, info.st_size, stat.S_ISREG(info.st_mode)):
            continue
        if files.used + info.st_size > MAX_ARCHIVE_BYTES:
            files.problems.append(_too_large(base))
            return
        try:
            data = file.read_bytes()
        except OSError as exc:
            files.problems.append(Problem(rel, f"cannot be read ({exc.strerror or exc})"))
            continue
        files.used += len(data)
        files.data[rel] = data
        files.mtimes[rel] = info.st_mtime_ns // 1_000_000


def _folder_base(path: Path) -> Path | None:
    """The folder holding index.json: `path` itself or its only subfolder."""
    if (path / INDEX_NAME).is_file():
        return path
    subfolders = [p for p in path.iterdir() if p.is_dir() and not p.is_symlink()]
    if len(subfolders) == 1 and (subfolders[0] / INDEX_NAME).is_file():
        return subfolders[0]
    return None


def _top(names: list[str]) -> str | None:
    """The top folder of an archive's paths ('' for none), or None without an index."""
    if INDEX_NAME in names:
        return ""
    tops = {n.split("/", 1)[0] for n in names if n.count("/") == 1 and n.endswith(INDEX_NAME)}
    tops = {t for t in tops if f"{t}/{INDEX_NAME}" in names}
    return tops.pop() if len(tops) == 1 else None


def _magic(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(4)


def _container(path: Path) -> tuple[_Files, str, Path]:
    """(the files read, the top folder's name + '/' or '', the source root)."""
    files = _Files()
    if path.is_dir():
        base = _folder_base(path)
        if base is not None:
            _from_folder(base, files, _walk(base))
            return files, "" if base == path else base.name + "/", path
        folder = _note_folder(path)
        if folder is None:
            raise InvalidInput(
                f"{path} is not a memdir export or note folder: it holds no {INDEX_NAME} "
                "and no <id>.md note files (nor a MEMORY/ folder of them)"
            )
        files.plain = True
        _from_folder(folder, files, _walk_notes(folder))
        return files, "" if folder == path else folder.name + "/", path
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file or folder")
    magic = _magic(path)
    if magic.startswith(_GZIP_MAGIC):
        _from_tar(path, files)
    elif magic in _ZIP_MAGIC:
        _from_zip(path, files)
    else:
        raise InvalidInput(f"{path.name} is not a folder, tar.gz or zip memdir export")
    found = _top(list(files.data))
    if found is None:
        raise InvalidInput(f"{path.name} is not a memdir export: it holds no {INDEX_NAME}")
    prefix = f"{found}/" if found else ""
    files.data = {n[len(prefix) :]: d for n, d in files.data.items() if n.startswith(prefix)}
    return files, prefix, path


def _index(data: bytes, origin: str, problems: list[Problem]) -> list[object]:
    """The index's note entries; InvalidInput when it is not a memdir export's index."""
    try:
        doc = json.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        problems.append(Problem(origin, f"not valid JSON ({str(exc)[:80]}); notes read unchecked"))
        return []
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InvalidInput(f"{origin} is not a memdir export index (no format {FORMAT!r})")
    version = doc.get("version")
    if version != VERSION:
        raise InvalidInput(
            f"{origin} is export version {str(version)[:20]}; this memdir reads version {VERSION}"
        )
    notes = doc.get("notes")
    if not isinstance(notes, list):
        problems.append(Problem(origin, "its notes are not a list; notes read unchecked"))
        return []
    return notes


def _entries(
    notes: list[object], origin: str, problems: list[Problem]
) -> dict[str, dict[str, Any]]:
    """Index entries by their path, each checked for an id, a safe path and a scope."""
    out: dict[str, dict[str, Any]] = {}
    for number, entry in enumerate(notes):
        where = f"{origin}: notes[{number}]"
        if not isinstance(entry, dict):
            problems.append(Problem(where, "not a JSON object"))
            continue
        note_id, raw_path = entry.get("id"), entry.get("path")
        if not isinstance(note_id, str) or not isinstance(raw_path, str):
            problems.append(Problem(where, "needs a text id and path"))
            continue
        path = _normalised(raw_path)
        if path is None or not _NOTE_PATH.match(path):
            problems.append(
                Problem(where, f"path {raw_path[:80]!r} is not project/<id>.md or user/<id>.md")
            )
            continue
        if entry.get("scope") not in (Scope.PROJECT.value, Scope.USER.value):
            problems.append(Problem(where, "scope must be 'project' or 'user'"))
            continue
        if path in out:
            problems.append(Problem(where, f"lists {path} a second time"))
            continue
        out[path] = entry
    return out


def _item(rel: str, data: bytes, entry: dict[str, Any] | None, origin: str) -> Imported | str:
    """The note of one file, or why it is not imported."""
    stem = PurePosixPath(rel).name.removesuffix(".md")
    try:
        note = parse_note(data, file_id=stem)
    except MemdirError as exc:
        return f"cannot be parsed: {exc}"
    scope = Scope(entry["scope"]) if entry is not None else Scope(rel.split("/", 1)[0])
    created: int | None = note.created_at or None
    updated: int | None = note.updated_at or None
    if entry is not None:
        if entry["id"] != note.id:
            return f"holds note {note.id}, index.json lists {str(entry['id'])[:80]}"
        expected = entry.get("hash")
        if isinstance(expected, str) and expected != note.hash:
            return "its content differs from the hash in index.json (changed since the export)"
        created = created or iso_ms(entry.get("createdAt"))
        # the index holds the time of an edit made by hand, later than the file's own
        listed = iso_ms(entry.get("updatedAt"))
        updated = max(updated or 0, listed or 0) or None
    return _imported(note, rel, origin, scope, created, updated)


def _plain_item(rel: str, data: bytes, origin: str, mtime_ms: int) -> Imported | str:
    """The note of one file of a plain note folder, or why it is not imported."""
    stem = rel.removesuffix(".md")
    try:
        validate_id(stem)
    except InvalidInput as exc:
        return f"its file name is not a note id: {exc}"
    if is_sealed(data):
        return "is encrypted; run `memdir export` where it lives and import that export"
    try:
        note = parse_note(data, file_id=stem, mtime_ms=mtime_ms)
    except MemdirError as exc:
        return f"cannot be parsed: {exc}"
    return _imported(note, rel, origin, None, note.created_at or None, note.updated_at or None)


def _imported(
    note: Note,
    rel: str,
    origin: str,
    scope: Scope | None,
    created: int | None,
    updated: int | None,
) -> Imported:
    return Imported(
        key=rel,
        summary=note.summary,
        body=note.body,
        type=note.type,
        tags=note.tags,
        created_at=created,
        updated_at=updated,
        origin=origin,
        id=note.id,
        scope=scope,
        supersedes=note.supersedes,
        private=note.private,
        extra=note.extra,
    )


def read(path: Path) -> Reading:
    """The notes of the memdir export at `path` (a folder, tar.gz or zip)."""
    files, prefix, root = _container(path)
    reading = Reading(kind=KIND, root=root, problems=files.problems)
    if files.plain:
        for rel in sorted(files.data):
            item = _plain_item(rel, files.data[rel], prefix + rel, files.mtimes.get(rel, 0))
            if isinstance(item, str):
                reading.problems.append(Problem(prefix + rel, item))
            else:
                reading.items.append(item)
        if not reading.items:  # a folder of other Markdown (a vault): say what it is not
            first = reading.problems[0] if reading.problems else None
            why = f" ({first.origin}: {first.reason})" if first is not None else ""
            raise InvalidInput(
                f"{path} is not a memdir export or note folder: it holds no {INDEX_NAME} and "
                f"none of its .md files is a memdir note{why}"
            )
        return reading
    index_origin = prefix + INDEX_NAME
    index = files.data.get(INDEX_NAME)
    if index is None:
        raise InvalidInput(f"{path} is not a memdir export: {INDEX_NAME} cannot be read")
    entries = _entries(
        _index(index, index_origin, reading.problems), index_origin, reading.problems
    )
    unlisted = sorted(n for n in files.data if _NOTE_PATH.match(n) and n not in entries)
    for rel in [*entries, *unlisted]:
        entry = entries.get(rel)
        data = files.data.get(rel)
        origin = prefix + rel
        if data is None:
            reading.problems.append(Problem(origin, "listed in index.json but not in the export"))
            continue
        item = _item(rel, data, entry, origin)
        if isinstance(item, str):
            reading.problems.append(Problem(origin, item))
        else:
            reading.items.append(item)
    return reading


def _index_head(data: bytes) -> bool:
    return FORMAT.encode("ascii") in data[:_HEAD_BYTES]


def detect(path: Path) -> bool:
    """True for a folder, tar.gz or zip whose index.json names the memdir export format."""
    try:
        if path.is_dir():
            base = _folder_base(path)
            if base is None:
                return False
            with (base / INDEX_NAME).open("rb") as handle:
                return _index_head(handle.read(_HEAD_BYTES))
        magic = _magic(path)
        if magic in _ZIP_MAGIC:
            return _detect_zip(path)
        if magic.startswith(_GZIP_MAGIC):
            return _detect_tar(path)
    except (OSError, *_DAMAGED, _TooLarge):
        return False
    return False


def _detect_zip(path: Path) -> bool:
    with zipfile.ZipFile(path) as archive:
        names = {_normalised(n) or "": n for n in archive.namelist()}
        top = _top([n for n in names if n])
        if top is None:
            return False
        with archive.open(names[f"{top}/{INDEX_NAME}" if top else INDEX_NAME]) as handle:
            return _index_head(handle.read(_HEAD_BYTES))


def _detect_tar(path: Path) -> bool:
    with (
        gzip.open(path, "rb") as unzipped,
        tarfile.open(fileobj=_Capped(unzipped, MAX_ARCHIVE_BYTES), mode="r|") as archive,
    ):
        for count, member in enumerate(archive, 1):
            name = _normalised(member.name) or ""
            if count > MAX_MEMBERS:
                return False
            if member.isfile() and name.count("/") <= 1 and name.endswith(INDEX_NAME):
                if name != INDEX_NAME and not name.endswith("/" + INDEX_NAME):
                    continue
                handle = archive.extractfile(member)
                return handle is not None and _index_head(handle.read(_HEAD_BYTES))
    return False

"""Exporting notes (§5): a tar.gz, a zip or a plain folder a person can read anywhere.

Layout (one top folder in an archive, named after the output file)::

    index.json          {"format": "memdir-export", "version": 1, "exported_at", "notes": [...]}
    README.md           what this is, a table of the notes, how to import it again
    project/<id>.md     the note files exactly as they are on disk
    user/<id>.md

`memdir import EXPORT --from memdir` reads it back with the same ids, hashes and
timestamps. Private notes are included (an export is the user's own copy); files that
cannot be parsed are left out and named in the report. Nothing is overwritten: the
output path must not exist yet; an archive is written whole or not at all.
"""

from __future__ import annotations

import builtins
import io
import json
import tarfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memdir.core import Scope, parse_note, parse_scope
from memdir.core.vocab import ExportFormat, choices
from memdir.errors import DiskError, InvalidInput, MemdirError, disk_error
from memdir.files.atomic import atomic_write
from memdir.memory.stores import Stores
from memdir.store import revision_of

__all__ = [
    "EXPORT_FORMATS",
    "ExportReport",
    "Exporter",
]


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What `memdir export` wrote: the file (or folder), its format and the notes per scope."""

    path: Path
    format: str
    notes: int
    by_scope: dict[str, int]
    #: note files left out because they cannot be parsed (see `memdir doctor`)
    skipped: tuple[str, ...] = ()


EXPORT_FORMATS = choices(ExportFormat)
INDEX_NAME = "index.json"
_FORMAT = "memdir-export"

Progress = Callable[[str, int, int], None]


def _collect(
    stores: Stores, scope: Scope | None
) -> tuple[builtins.list[tuple[str, bytes, dict[str, object]]], builtins.list[str]]:
    """(archive path, file bytes, index entry) of every parseable note; skipped files."""
    files: builtins.list[tuple[str, bytes, dict[str, object]]] = []
    skipped: builtins.list[str] = []
    for store in stores.chosen(scope):
        # A note edited by hand was updated when memdir saw the edit (see ScopeStore.scan):
        # the index says so, and an import of the export keeps that time.
        seen = store.scan().notes
        for note_id in sorted(store.directory.ids_on_disk()):
            data = store.directory.read_bytes(note_id)
            if data is None:
                continue
            try:
                note = parse_note(data, file_id=note_id)
            except MemdirError:
                skipped.append(f"{store.scope.value}/{note_id}.md")
                continue
            path = f"{store.scope.value}/{note_id}.md"
            entry: dict[str, object] = {
                "id": note_id,
                "scope": store.scope.value,
                "path": path,
                "hash": note.hash,
                "revision": revision_of(data),
                "createdAt": note.created_at,
                "updatedAt": max(
                    note.updated_at, seen[note_id].updated_at if note_id in seen else 0
                ),
                "summary": note.summary,
                "type": note.type.value if note.type is not None else None,
                "tags": list(note.tags),
            }
            files.append((path, data, entry))
    return files, skipped


def _readme(entries: builtins.list[dict[str, object]], when: int, archive: str) -> str:
    stamp = datetime.fromtimestamp(when / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# memdir export",
        "",
        f"{len(entries)} notes, exported {stamp}. Each note is a Markdown file with a line of",
        "JSON frontmatter (id, summary, type, tags, times) between `---` lines; `[[id]]` links",
        "name other notes. `index.json` lists every note with its content hash.",
        "",
        f"Import it again: `memdir import {archive} --from memdir`.",
        "",
        "| note | scope | type | summary |",
        "|---|---|---|---|",
    ]
    for e in entries:
        summary = str(e["summary"]).replace("|", "\\|")
        lines.append(f"| [{e['id']}]({e['path']}) | {e['scope']} | {e['type'] or ''} | {summary} |")
    return "\n".join(lines) + "\n"


class Exporter:
    """`Memory.exporter`: the notes as an archive or folder that `importer` reads back."""

    def __init__(self, stores: Stores, *, clock: Callable[[], int]) -> None:
        self.stores = stores
        self._clock = clock

    def run(
        self,
        out: str | Path,
        *,
        scope: Scope | str | None = None,
        format: str | None = None,
        progress: Progress | None = None,
    ) -> ExportReport:
        """Write the notes of `scope` (None: both) to `out` as a tar.gz, a zip or a plain
        folder (`format`, None: from the name) with an index; `importer.run(out, "memdir")`
        gives back the same ids, hashes and timestamps. `out` must not exist yet."""
        return _export(self.stores, Path(out), scope, format, self._clock(), progress)


def _export(
    stores: Stores,
    out: Path,
    scope: Scope | str | None,
    format: str | None,
    when: int,
    progress: Progress | None,
) -> ExportReport:
    out = Path(out).expanduser()
    fmt = format or _format_of(out)
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput(f"export format must be one of {', '.join(EXPORT_FORMATS)}")
    if out.exists() or out.is_symlink():
        raise InvalidInput(f"{out} exists already; export to a new path (nothing is overwritten)")
    if not out.parent.is_dir():
        raise InvalidInput(f"no folder {out.parent} to export into")
    chosen = parse_scope(scope)
    files, skipped = _collect(stores, chosen)
    entries = [e for _, _, e in files]
    index = {"format": _FORMAT, "version": 1, "exported_at": when, "notes": entries}
    extra = {
        INDEX_NAME: json.dumps(index, ensure_ascii=False, indent=1).encode("utf-8") + b"\n",
        "README.md": _readme(entries, when, out.name).encode("utf-8"),
    }
    # The index first: a reader finds it without reading the whole archive.
    members = [*extra.items(), *((p, d) for p, d, _ in files)]
    try:
        if fmt == "markdown":
            _write_folder(out, members, progress)
        else:
            top = _top_name(out)
            data = _tar(top, members, when) if fmt == "tar.gz" else _zip(top, members, when)
            atomic_write(out, data, mode=0o600)
    except OSError as exc:
        left = _clear_partial(out, fmt)
        mapped = disk_error(exc, f"no export was written{left}")
        if mapped is not None:
            raise mapped from exc
        raise DiskError(f"cannot write the export to {out}: {exc.strerror or exc}") from exc
    by_scope: dict[str, int] = {}
    for e in entries:
        by_scope[str(e["scope"])] = by_scope.get(str(e["scope"]), 0) + 1
    if progress is not None:
        progress("export", len(files), len(files))
    return ExportReport(out, fmt, len(files), by_scope, tuple(skipped))


def _clear_partial(out: Path, fmt: str) -> str:
    """Remove what a failed folder export wrote (the folder is new: nothing else is in it),
    so that a rerun is not refused; what could not be removed, said."""
    if fmt != "markdown" or not out.is_dir():
        return ""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    return f" ({out} could not be removed; remove it before a rerun)" if out.exists() else ""


def _format_of(out: Path) -> str:
    name = out.name.lower()
    if name.endswith((".tar.gz", ".tgz")):
        return "tar.gz"
    if name.endswith(".zip"):
        return "zip"
    return "markdown" if "." not in name else "tar.gz"


def _top_name(out: Path) -> str:
    name = out.name
    for suffix in (".tar.gz", ".tgz", ".zip"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or "memdir-export"


def _tar(top: str, members: builtins.list[tuple[str, bytes]], when: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as archive:
        for folder in sorted({top, *(f"{top}/{p.split('/')[0]}" for p, _ in members if "/" in p)}):
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, when // 1000
            archive.addfile(info)
        for path, data in members:
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mode, info.mtime = len(data), 0o644, when // 1000
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _zip(top: str, members: builtins.list[tuple[str, bytes]], when: int) -> bytes:
    buffer = io.BytesIO()
    stamp = datetime.fromtimestamp(max(when // 1000, 315532800), UTC).timetuple()[:6]
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in members:
            info = zipfile.ZipInfo(f"{top}/{path}", date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def _write_folder(
    out: Path, members: builtins.list[tuple[str, bytes]], progress: Progress | None
) -> None:
    out.mkdir(mode=0o700)
    for done, (path, data) in enumerate(members, 1):
        target = out / path
        target.parent.mkdir(mode=0o700, exist_ok=True)
        atomic_write(target, data, mode=0o600, sync_dir=False)
        if progress is not None and done % 200 == 0:
            progress("export", done, len(members))

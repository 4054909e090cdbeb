"""The derived SQLite index of one note directory: incremental refresh, full-text, vectors.

Refresh compares each file's (size, mtime, inode) with what was indexed and reads
only files that changed, so a no-change check costs one directory listing. A
file whose mtime is within two seconds of when it was indexed is re-read and
compared by revision, because an edit inside the file system's clock tick keeps
the same stamp. Unparseable files are remembered by stamp so they are not
re-read either; private notes are tracked but never chunked or searchable.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memdir.core import Note, parse_note
from memdir.errors import ParseError
from memdir.index.chunking import chunk_body
from memdir.index.schema import open_index_db
from memdir.index.tokenize import index_terms

__all__ = ["ChunkRow", "NoteSource", "RefreshStats", "SearchIndex", "embed_text"]

_RACY_NS = 2_000_000_000
Stamp = tuple[int, int, int]


class NoteSource(Protocol):
    """What the index needs from a note directory (the store provides it)."""

    def stamps(self) -> tuple[dict[str, Stamp], int]: ...

    def read_bytes(self, note_id: str) -> bytes | None: ...


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What a refresh did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    over_limit: int = 0
    #: (note id, file bytes, parsed note) of every note read because it changed.
    read: tuple[tuple[str, bytes, Note], ...] = field(default=(), repr=False)


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One indexed chunk with what search results report about it."""

    chunk_id: int
    note_id: str
    ord: int
    chunk_hash: str
    start: int
    end: int
    text: str
    rev: str
    summary: str
    updated_at: int


def embed_text(summary: str, text: str) -> str:
    """What the embedder sees for a chunk: the note's summary gives every chunk its topic,
    unless the chunk already holds it (repeating it skews the vector toward it)."""
    return text if summary in text else f"{summary}\n{text}"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SearchIndex:
    """The index database of one note directory. Only this class runs SQL on it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn, self.rebuilt = open_index_db(path)
        self._lock = threading.RLock()
        self._matrix: tuple[str, int, npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None
        self._generation = 0

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            self._generation += 1

    # -- refresh ----------------------------------------------------------------------

    def refresh(
        self, source: NoteSource, *, progress: Callable[[int, int], None] | None = None
    ) -> RefreshStats:
        """Bring the index in line with the directory, reading only changed files."""
        stamps, over = source.stamps()
        with self._lock:
            known = {
                row[0]: (row[1], row[2], row[3], row[4], row[5])
                for row in self._conn.execute(
                    "SELECT note_id, size, mtime_ns, ino, indexed_ns, rev FROM notes"
                )
            }
        removed = [note_id for note_id in known if note_id not in stamps]
        todo = [
            note_id
            for note_id, stamp in stamps.items()
            if note_id not in known
            or known[note_id][:3] != stamp
            or known[note_id][3] - known[note_id][1] < _RACY_NS
        ]
        if not todo and not removed:
            return RefreshStats(unchanged=len(stamps), over_limit=over)
        added = updated = 0
        read: list[tuple[str, bytes, Note]] = []
        batch: list[tuple[str, Stamp, bytes | None]] = []
        for i, note_id in enumerate(todo, 1):
            batch.append((note_id, stamps[note_id], source.read_bytes(note_id)))
            if len(batch) >= 200 or i == len(todo):
                a, u, r = self._apply(batch, known)
                added, updated = added + a, updated + u
                read.extend(r)
                batch = []
                if progress is not None:
                    progress(i, len(todo))
        if removed:
            with self._write() as conn:
                for note_id in removed:
                    self._delete_note(conn, note_id)
        unchanged = len(stamps) - added - updated
        return RefreshStats(added, updated, len(removed), unchanged, over, tuple(read))

    def _apply(
        self,
        batch: Sequence[tuple[str, Stamp, bytes | None]],
        known: dict[str, tuple[int, int, int, int, str]],
    ) -> tuple[int, int, list[tuple[str, bytes, Note]]]:
        added = updated = 0
        read: list[tuple[str, bytes, Note]] = []
        now = time.time_ns()
        with self._write() as conn:
            for note_id, stamp, data in batch:
                if data is None:  # removed since the listing
                    self._delete_note(conn, note_id)
                    continue
                rev = hashlib.sha256(data).hexdigest()
                previous = known.get(note_id)
                if previous is not None and previous[4] == rev:
                    conn.execute(
                        "UPDATE notes SET size=?, mtime_ns=?, ino=?, indexed_ns=? WHERE note_id=?",
                        (*stamp, now, note_id),
                    )
                    continue
                self._delete_note(conn, note_id)
                note = self._index_note(conn, note_id, stamp, data, rev, now)
                if note is not None:
                    read.append((note_id, data, note))
                if previous is None:
                    added += 1
                else:
                    updated += 1
        return added, updated, read

    def _index_note(
        self, conn: sqlite3.Connection, note_id: str, stamp: Stamp, data: bytes, rev: str, now: int
    ) -> Note | None:
        try:
            note = parse_note(data, file_id=note_id, mtime_ms=stamp[1] // 1_000_000)
            chunks = chunk_body(data)
        except ParseError:
            conn.execute(
                "INSERT INTO notes VALUES (?,?,?,?,?,'bad',?,'','',NULL,'[]','[]',0)",
                (note_id, *stamp, now, rev),
            )
            return None
        state = "private" if note.private else "ok"
        conn.execute(
            "INSERT INTO notes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                note_id,
                *stamp,
                now,
                state,
                rev,
                note.hash,
                note.summary,
                note.type.value if note.type else None,
                json.dumps(list(note.tags), ensure_ascii=False),
                json.dumps(list(note.supersedes)),
                note.updated_at,
            ),
        )
        if note.private:
            return note
        summary_terms = " ".join(index_terms(note.summary))
        meta_terms = " ".join(index_terms(" ".join((*note.tags, note.type or ""))))
        # A note with an empty body still needs one row so its summary is searchable.
        spans = chunks or []
        rows = [
            (c.ord, c.hash, _sha(embed_text(note.summary, c.text)), c.start, c.end, c.text)
            for c in spans
        ]
        if not rows:
            rows = [(0, _sha(""), _sha(note.summary), 0, 0, "")]
        for ordinal, chunk_hash, ehash, start, end, text in rows:
            cur = conn.execute(
                "INSERT INTO chunks(note_id, ord, chunk_hash, embed_hash, start, end_, text) "
                "VALUES (?,?,?,?,?,?,?)",
                (note_id, ordinal, chunk_hash, ehash, start, end, text),
            )
            conn.execute(
                "INSERT INTO fts(rowid, summary, body, meta) VALUES (?,?,?,?)",
                (cur.lastrowid, summary_terms, " ".join(index_terms(text)), meta_terms),
            )
        return note

    @staticmethod
    def _delete_note(conn: sqlite3.Connection, note_id: str) -> None:
        conn.execute(
            "DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE note_id=?)", (note_id,)
        )
        conn.execute("DELETE FROM chunks WHERE note_id=?", (note_id,))
        conn.execute("DELETE FROM notes WHERE note_id=?", (note_id,))

    def forget(self, note_id: str, *, scrub: bool = False) -> None:
        """Drop a note, its chunks and the vectors only it used (forget).

        With `scrub`, also merge the full-text segments (deleted terms otherwise stay
        in old segments until a merge) and checkpoint the WAL, so no copy of the note's
        terms remains in the database files.
        """
        with self._write() as conn:
            hashes = [
                r[0]
                for r in conn.execute("SELECT embed_hash FROM chunks WHERE note_id=?", (note_id,))
            ]
            self._delete_note(conn, note_id)
            for h in hashes:
                if conn.execute("SELECT 1 FROM chunks WHERE embed_hash=?", (h,)).fetchone() is None:
                    conn.execute("DELETE FROM vectors WHERE embed_hash=?", (h,))
            if scrub:
                conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        if scrub:
            with self._lock:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def clear(self) -> None:
        """Empty the index (vectors stay cached: they are keyed by content)."""
        with self._write() as conn:
            conn.execute("DELETE FROM fts")
            conn.execute("DELETE FROM chunks")
            conn.execute("DELETE FROM notes")

    # -- queries ----------------------------------------------------------------------

    def lexical(self, match: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) for an FTS5 MATCH expression, best first (score = −bm25)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT rowid, bm25(fts, 5.0, 1.0, 2.0) AS s FROM fts WHERE fts MATCH ? "
                "ORDER BY s LIMIT ?",
                (match, limit),
            ).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def matching(self, match: str) -> set[int]:
        """Every chunk id matching an FTS5 expression (to filter vector candidates by mode)."""
        with self._lock:
            return {
                int(r[0])
                for r in self._conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (match,))
            }

    def chunks(self, ids: Iterable[int]) -> dict[int, ChunkRow]:
        """Chunk rows with their note's revision and summary, by chunk id."""
        wanted = list(dict.fromkeys(ids))
        out: dict[int, ChunkRow] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for r in self._conn.execute(
                    "SELECT c.id, c.note_id, c.ord, c.chunk_hash, c.start, c.end_, c.text, n.rev, "
                    "n.summary, n.updated_at FROM chunks c JOIN notes n USING(note_id) "
                    f"WHERE c.id IN ({marks})",
                    part,
                ):
                    out[int(r[0])] = ChunkRow(*r)
        return out

    def stored_terms(self, ids: Iterable[int]) -> dict[int, tuple[list[str], list[str], list[str]]]:
        """The indexed term sequences (summary, body, meta) of chunks, for the rerank."""
        wanted = list(dict.fromkeys(ids))
        out: dict[int, tuple[list[str], list[str], list[str]]] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for rowid, summary, body, meta in self._conn.execute(
                    f"SELECT rowid, summary, body, meta FROM fts WHERE rowid IN ({marks})", part
                ):
                    out[int(rowid)] = (summary.split(), body.split(), meta.split())
        return out

    def doc_freq(self, terms: Iterable[str]) -> tuple[dict[str, int], int]:
        """(chunks containing each term, number of chunks)."""
        wanted = list(dict.fromkeys(terms))
        with self._lock:
            total = int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            if not wanted:
                return {}, total
            marks = ",".join("?" * len(wanted))
            rows = self._conn.execute(
                f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", wanted
            ).fetchall()
        return {str(t): int(d) for t, d in rows}, total

    def superseded(self) -> dict[str, str]:
        """note id → the id of a live note that supersedes it."""
        out: dict[str, str] = {}
        with self._lock:
            for note_id, sup in self._conn.execute(
                "SELECT note_id, supersedes FROM notes WHERE state='ok' AND supersedes != '[]'"
            ):
                for old in json.loads(sup):
                    out.setdefault(old, note_id)
        return out

    def counts(self) -> dict[str, int]:
        """Rows per table, for status and tests."""
        with self._lock:
            return {
                t: int(self._conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
                for t in ("notes", "chunks", "fts", "vectors")
            }

    def note_ids(self) -> set[str]:
        """Ids of searchable notes."""
        with self._lock:
            return {r[0] for r in self._conn.execute("SELECT note_id FROM notes WHERE state='ok'")}

    # -- vectors ----------------------------------------------------------------------

    def pending(self, embedder: str, limit: int | None = None) -> list[tuple[str, str]]:
        """(embed hash, text to embed) of chunks with no vector from `embedder` yet."""
        sql = (
            "SELECT c.embed_hash, n.summary, c.text FROM chunks c JOIN notes n USING(note_id) "
            "WHERE NOT EXISTS (SELECT 1 FROM vectors v "
            "WHERE v.embedder=? AND v.embed_hash=c.embed_hash) "
            "GROUP BY c.embed_hash ORDER BY n.updated_at DESC"
        )
        params: tuple[object, ...] = (embedder,)
        if limit is not None:
            sql += " LIMIT ?"
            params = (embedder, limit)
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [(r[0], embed_text(r[1], r[2])) for r in rows]

    def put_vectors(
        self, embedder: str, hashes: Sequence[str], matrix: npt.NDArray[np.float32]
    ) -> None:
        """Store vectors for embed hashes."""
        data = np.ascontiguousarray(matrix, dtype=np.float32)
        with self._write() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors(embedder, embed_hash, vec) VALUES (?,?,?)",
                [(embedder, h, data[i].tobytes()) for i, h in enumerate(hashes)],
            )

    def matrix(self, embedder: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(chunk ids, one contiguous float32 matrix of their vectors) for `embedder`."""
        with self._lock:
            # data_version changes when another connection commits: a long-running
            # process sees vectors other processes added.
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            stamp = self._generation * 1_000_003 + version
            if self._matrix is not None and self._matrix[:2] == (embedder, stamp):
                return self._matrix[2], self._matrix[3]
            rows = self._conn.execute(
                "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.embed_hash=c.embed_hash "
                "JOIN notes n ON n.note_id=c.note_id WHERE v.embedder=? AND n.state='ok' "
                "ORDER BY c.id",
                (embedder,),
            ).fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            if rows:
                blob = b"".join(r[1] for r in rows)
                mat = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1).copy()
            else:
                mat = np.zeros((0, 0), dtype=np.float32)
            self._matrix = (embedder, stamp, ids, mat)
            return ids, mat

    def drop_vectors(self, keep_embedder: str | None) -> int:
        """Delete vectors of other embedders (after a change of embedder); return how many."""
        with self._write() as conn:
            cur = conn.execute("DELETE FROM vectors WHERE embedder IS NOT ?", (keep_embedder,))
            return int(cur.rowcount)

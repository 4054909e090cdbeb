"""The derived SQLite index of one note directory: incremental refresh, full-text, vectors.

Refresh compares each file's (size, mtime, inode) with what was indexed and reads
only files that changed, so a no-change check costs one directory listing. A
file whose mtime is within two seconds of when it was indexed is re-read and
compared by revision, because an edit inside the file system's clock tick keeps
the same stamp. Unparseable files are remembered by stamp so they are not
re-read either; private notes are tracked but never chunked or searchable. A file
that cannot be read (OSError: another user's file, an I/O error) is the file's
problem, not the index's: the note is left out of the index (never served as it was
indexed before) and tried again on the next refresh, since making it readable need
not change its stamp; `doctor` reports the file.

Answers do not depend on chunk row ids (which differ between an index built note
by note and one rebuilt by reindex): equal scores are ordered by (note id, chunk
ordinal), and the vector matrix is laid out in that order too. A `SearchFilter`
(types, tags, excluded notes) becomes part of each query's SQL, so it applies before
BM25's cut and before the vector top-k. What a query
reads on every call (the indexed stamps, the vector matrix, the superseded map,
whether anything awaits embedding) is cached until the indexed content changes,
here or in another process (``PRAGMA data_version``).

Damage heals: a database that SQLite reports damaged (on open, by `PRAGMA
quick_check`, or by any later statement) is replaced by an empty one, and the call
that met the damage raises `IndexDamaged`; the caller refreshes from the files and
tries again (`memdir.retrieve.Retriever` does, with one warning).

A disk that refuses writes (full, read-only) costs nothing already indexed: a failed
write is rolled back whole, `behind` then names the notes the index no longer matches,
and a `stand_in` index (the file read-only, or one in memory) serves queries when the
database cannot even be opened for writing.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from memdir.core import Note, NoteType, Scope
from memdir.errors import IntegrityError
from memdir.index import heap, vector_rows
from memdir.index import rows as index_rows
from memdir.index.ann import AnnIndexes
from memdir.index.note_rows import delete_note, index_note, indexed_revision, put_ctime
from memdir.index.query import SearchFilter, kept_sql
from memdir.index.refusal import Behind, behind, mismatches, refusal
from memdir.index.rows import (
    ChunkRow,
    KnownStamps,
    NoteSource,
    RefreshStats,
    Stamp,
    embed_text,
)
from memdir.index.schema import (
    damage_of,
    damage_record,
    is_damage,
    open_index,
    open_memory,
    open_stand_in,
)
from memdir.index.stored import fill_recall_terms
from memdir.index.vectors import MatrixIndex, read_rows

__all__ = [
    "ChunkRow",
    "IndexDamaged",
    "NoteSource",
    "RefreshStats",
    "SearchIndex",
    "embed_text",
]

#: Each indexed note's file stamp, its indexed-at time and revision (SHA-256), by note id.
_INDEXED = (
    "SELECT n.note_id, n.size, n.mtime_ns, n.ino, coalesce(c.ctime_ns, 0), n.indexed_ns, "
    "n.rev FROM notes n LEFT JOIN note_ctimes c ON c.note_id = n.note_id"
)


class IndexDamaged(Exception):
    """Raised by a `SearchIndex` call that found its database damaged. The database has
    been replaced by an empty one: refresh it from the files and call again."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"the search index {path} was damaged ({reason})")
        self.path = path
        self.reason = reason


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _healing(
    method: Callable[Concatenate[SearchIndex, _P], _T],
) -> Callable[Concatenate[SearchIndex, _P], _T]:
    """Turn damage met by `method` into a rebuilt, empty database and `IndexDamaged`."""

    @functools.wraps(method)
    def run(self: SearchIndex, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        inode = self._inode  # the database this call read, if another thread replaces it
        try:
            return method(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            reason = self._replace_damaged(str(exc), inode)
        raise IndexDamaged(self.path, reason)

    return run


class SearchIndex:
    """The index database of one note directory. Only this class runs SQL on it."""

    def __init__(
        self,
        path: Path,
        *,
        stand_in: bool = False,
        memory: bool = False,
        image: bytes | None = None,
    ) -> None:
        """Open the index at `path`; with `stand_in`, a stand-in for it that needs no
        write to the disk (see `memdir.index.schema.open_stand_in`). With `memory`, an
        index held in memory only, never written to `path` (an encrypted store's), empty
        or from the `image` an earlier one gave (`image()`)."""
        self.path = path
        #: Whether this index lives in memory only (an encrypted store's).
        self.memory = memory
        if memory:
            opened = open_memory(image)
        else:
            opened = open_stand_in(path) if stand_in else open_index(path)
        self._conn, self.rebuilt, self._inode = opened.conn, opened.rebuilt, opened.inode
        #: What was wrong with a damaged database replaced on open (None: nothing was).
        self.damage = opened.damage
        #: "read-only" or "memory" for a stand-in (None: the index file, writable).
        self.stand_in = opened.stand_in
        self._lock = threading.RLock()
        # Bumped after every commit of this connection that changes what queries see
        # (not after a refresh that only re-stamps unchanged files).
        self._generation = 0
        #: Commits of this connection (re-stamps too): an in-memory image is kept when it grew.
        self.writes = 0
        self._known: tuple[tuple[int, int], KnownStamps] | None = None
        self._cache: dict[str, tuple[tuple[int, int], object]] = {}
        #: `PRAGMA data_version` when this connection's last refresh began: when it
        #: still holds, no other connection changed the index since (None: no refresh,
        #: or the last one failed).
        self._refreshed: int | None = None
        #: Notes above maxNotes at the last full refresh, and the notes the disk would
        #: not read at the last refresh (looked at again by every refresh).
        self._over = 0
        self._unreadable: set[str] = set()
        self._vectors: tuple[str, tuple[int, int], MatrixIndex] | None = None
        self._ann = AnnIndexes(None if memory else path)

    def close(self) -> None:
        """Close the database connection."""
        self._ann.close()
        with self._lock:
            self._conn.close()

    def _replace_damaged(self, reason: str, inode: int) -> str:
        """Replace the damaged database (of `inode`) with an empty one, unless another
        thread or process already did, and forget everything read from it; returns the
        reason, shortened."""
        with self._lock:
            if inode != self._inode:
                return reason  # another thread of this process replaced it meanwhile
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            try:  # a stand-in is never written to disk: one in memory replaces it
                if self.memory:
                    opened = open_memory()
                elif self.stand_in:
                    opened = open_stand_in(self.path, in_memory=True)
                else:
                    opened = None
                opened = opened or open_index(self.path, discard=(self._inode, reason))
            except (OSError, sqlite3.Error) as exc:
                if refusal(exc, self.path) is None:
                    raise
                opened = open_stand_in(self.path, in_memory=True)  # refilled from the files
            self._conn, self._inode, self.stand_in = opened.conn, opened.inode, opened.stand_in
            self.rebuilt = True
            self._generation += 1
            self._known = self._vectors = self._refreshed = None
            self._cache = {}
            return opened.damage or reason

    def image(self) -> bytes:
        """The whole database as bytes (for an in-memory index to be kept in memory
        elsewhere: the unlock agent)."""
        with self._lock:
            return self._conn.serialize()

    @_healing
    def check(self, *, full: bool = False) -> str | None:
        """SQLite's check of the database (`full`: the slow, complete one); when it finds
        damage the database is replaced by an empty one and `IndexDamaged` raised."""
        with self._lock:
            inode = self._inode
            found = damage_of(self._conn, full=full)
        if found is None:
            return None
        reason = self._replace_damaged(found, inode)
        raise IndexDamaged(self.path, reason)

    @_healing
    def damage_record(self) -> str | None:
        """When and why this database replaced a damaged one (None: it did not); kept
        until the next `clear` (a full reindex)."""
        with self._lock:
            return damage_record(self._conn)

    @contextmanager
    def transaction(self, *, changes: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any
        error), under this index's lock: every change this class makes goes through it.
        `changes`: whether the commit changes what queries see (not a mere re-stamp)."""
        with self._lock:
            conn = self._conn  # the one this transaction began on, even if replaced meanwhile
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")  # a full disk may refuse the commit itself
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            self.writes += 1
            if changes:
                self._generation += 1

    def _stamp(self) -> tuple[int, int]:
        """Changes whenever indexed content may have changed, here or in another process."""
        version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        return self._generation, version

    def _cached(self, name: str, compute: Callable[[], object]) -> object:
        with self._lock:
            stamp = self._stamp()
            hit = self._cache.get(name)
            if hit is not None and hit[0] == stamp:
                return hit[1]
            value = compute()
            self._cache[name] = (stamp, value)
            return value

    # -- refresh ----------------------------------------------------------------------

    @_healing
    def refresh(
        self,
        source: NoteSource,
        *,
        progress: Callable[[int, int], None] | None = None,
        observe: Callable[[str, bytes, Note], None] | None = None,
        only: Collection[str] | None = None,
    ) -> RefreshStats:
        """Bring the index in line with the directory, reading only changed files.

        Notes read because they changed go to `observe` after each batch is committed
        (so a rebuild of many notes does not hold them all in memory), else they are
        returned in `RefreshStats.read`.

        `only`: the notes that may have changed since the last refresh of this index
        (a watch of the directory said so); only their files are looked at, and the
        others are taken as they were. Counts in the result cover those notes only.
        """
        with self._lock:
            # What this refresh began from: a commit of another connection meanwhile
            # (a reindex's clear, say) is then noticed by the next call, not absorbed.
            start = self._stamp()[1]
            self._refreshed = None  # set again once this refresh is through
            known = self._known_rows()
            limit = getattr(source, "max_notes", None)
            new = 0 if only is None else sum(1 for i in only if i not in known.stamps)
            if only is not None and (
                self._over or (limit is not None and len(known.stamps) + new > limit)
            ):
                only = None  # above maxNotes: which files count needs them all
            if only is not None:
                # A note the disk would not read is tried again each time, as in full.
                only = {*only, *self._unreadable}
                stamps, over = source.stamps_of(only), 0
            else:
                stamps, over = source.stamps()
                self._over = over
            if only is None and not known.racy and known.stamps == stamps:
                self._refreshed, self._unreadable = start, set()
                return RefreshStats(unchanged=len(stamps), over_limit=over)
            looked_at = known.stamps if only is None else [i for i in only if i in known.stamps]
            removed = [note_id for note_id in looked_at if note_id not in stamps]
            todo = [
                note_id
                for note_id, stamp in stamps.items()
                if known.stamps.get(note_id) != stamp or note_id in known.racy
            ]
            if not todo and not removed:
                self._refreshed = start
                return RefreshStats(unchanged=len(stamps), over_limit=over)
            added = updated = 0
            read: list[tuple[str, bytes, Note]] = []
            unreadable: list[str] = []
            batch: list[tuple[str, Stamp, bytes | None]] = []
            for i, note_id in enumerate(todo, 1):
                try:
                    batch.append((note_id, stamps[note_id], source.read_bytes(note_id)))
                except (OSError, IntegrityError):  # the file's problem (a sealed one that
                    unreadable.append(note_id)  # does not open too): never a roll-back
                if len(batch) >= 200 or i == len(todo):
                    if batch:
                        a, u, r = self._apply(batch, known)
                        added, updated = added + a, updated + u
                        if observe is None:
                            read.extend(r)
                        else:
                            for item in r:
                                observe(*item)
                        batch = []
                    if progress is not None:
                        progress(i, len(todo))
            # What the index holds of an unreadable note cannot be checked: it goes too.
            dropped = [*removed, *(i for i in unreadable if i in known.stamps)]
            if dropped:
                with self.transaction() as conn:
                    for note_id in dropped:
                        delete_note(conn, note_id)
                for note_id in dropped:  # once committed: a refused write changes nothing
                    known.drop(note_id)
            self._known = ((self._generation, start), known)
            self._refreshed = start
            self._unreadable = set(unreadable)
        unchanged = len(stamps) - added - updated - len(unreadable)
        if added + updated + len(removed) >= heap.LARGE:
            heap.release()  # what reading and indexing those notes used
        return RefreshStats(
            added, updated, len(removed), unchanged, over, tuple(read), tuple(unreadable)
        )

    def in_step(self) -> bool:
        """True when this connection refreshed the index and no other one has changed it
        since (so what it last refreshed is what it holds)."""
        with self._lock:
            return self._refreshed is not None and self._refreshed == self._stamp()[1]

    def _known_rows(self) -> KnownStamps:
        """What is indexed; kept in memory (and in step with this connection's writes)
        so that a no-change refresh costs no query beyond `data_version`."""
        stamp = self._stamp()
        if self._known is not None and self._known[0] == stamp:
            return self._known[1]
        self._known = None  # the old one goes before the new one is read
        known = KnownStamps({}, set())
        for note_id, size, mtime_ns, ino, ctime_ns, indexed_ns, _ in self._conn.execute(_INDEXED):
            known.put(note_id, (size, mtime_ns, ino, ctime_ns), indexed_ns)
        self._known = (stamp, known)
        return known

    @_healing
    def behind(self, source: NoteSource) -> Behind:
        """The notes whose files this index does not hold as they are now (after a refresh
        the disk refused), or holds but cannot read now; reads only files whose stamps
        differ, writes nothing."""
        stamps, _ = source.stamps()
        with self._lock:  # read whole: a refused refresh is rare, a note's revision is not kept
            known = {
                r[0]: ((r[1], r[2], r[3], r[4]), r[5], r[6]) for r in self._conn.execute(_INDEXED)
            }
        return behind(known, stamps, source.read_bytes, racy_ns=index_rows.RACY_NS)

    def _apply(
        self, batch: Sequence[tuple[str, Stamp, bytes | None]], known: KnownStamps
    ) -> tuple[int, int, list[tuple[str, bytes, Note]]]:
        """Index one batch of files in one transaction; `known` is updated to match."""
        added = updated = 0
        read: list[tuple[str, bytes, Note]] = []
        now = time.time_ns()
        changes = False
        done: list[tuple[str, Stamp]] = []
        gone: list[str] = []
        with self.transaction(changes=False) as conn:
            for note_id, stamp, data in batch:
                if data is None:  # removed since the listing
                    delete_note(conn, note_id)
                    gone.append(note_id)
                    changes = True
                    continue
                rev = hashlib.sha256(data).hexdigest()
                done.append((note_id, stamp))
                previous = indexed_revision(conn, note_id) if note_id in known.stamps else None
                if previous == rev:
                    conn.execute(
                        "UPDATE notes SET size=?, mtime_ns=?, ino=?, indexed_ns=? WHERE note_id=?",
                        (*stamp[:3], now, note_id),
                    )
                    put_ctime(conn, note_id, stamp)
                    fill_recall_terms(conn, note_id, data, rev)  # one older than them
                    continue
                changes = True
                delete_note(conn, note_id)
                note = index_note(conn, note_id, stamp, data, rev, now)
                if note is not None:
                    read.append((note_id, data, note))
                if previous is None:
                    added += 1
                else:
                    updated += 1
        if changes:
            self._generation += 1
        for note_id, stamp in done:
            known.put(note_id, stamp, now)
        for note_id in gone:
            known.drop(note_id)
        return added, updated, read

    @_healing
    def forget(self, note_id: str, *, scrub: bool = False) -> None:
        """Drop a note, its chunks and the vectors only it used (forget).

        With `scrub`, also merge the full-text segments (deleted terms otherwise stay
        in old segments until a merge) and checkpoint the WAL, so no copy of the note's
        terms remains in the database files.
        """
        with self.transaction() as conn:
            hashes = [
                r[0]
                for r in conn.execute("SELECT embed_hash FROM chunks WHERE note_id=?", (note_id,))
            ]
            delete_note(conn, note_id)
            for h in hashes:
                if conn.execute("SELECT 1 FROM chunks WHERE embed_hash=?", (h,)).fetchone() is None:
                    conn.execute("DELETE FROM vectors WHERE embed_hash=?", (h,))
            if scrub:
                conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        if scrub:
            with self._lock:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @_healing
    def clear(self) -> None:
        """Empty the index (vectors stay cached: they are keyed by content)."""
        with self.transaction() as conn:  # holds the lock: no refresh runs in between
            self._refreshed = None  # a refresh of some files only would not refill it
            conn.execute("DELETE FROM fts")
            conn.execute("DELETE FROM chunks")
            conn.execute("DELETE FROM note_tags")
            conn.execute("DELETE FROM recall_terms")
            conn.execute("DELETE FROM note_ctimes")
            conn.execute("DELETE FROM notes")
            conn.execute("DELETE FROM meta WHERE key='damaged'")

    # -- queries ----------------------------------------------------------------------

    _BM25 = "bm25(fts, 5.0, 1.0, 2.0)"

    @_healing
    def lexical(
        self,
        match: str,
        limit: int,
        filter: SearchFilter | None = None,
        scope: Scope | None = None,
    ) -> list[tuple[int, float]]:
        """(chunk id, score) for an FTS5 MATCH expression, best first (score = −bm25).

        Only chunks of notes that `filter` keeps take part (`scope`: the scope of this
        index's notes). Equal scores are ordered by (note id, chunk ordinal), also across
        the cut at `limit`, so the answer does not depend on row ids.
        """
        if limit <= 0:
            return []
        # "+rowid": an expression, so SQLite checks it on each match instead of handing
        # FTS5 the id list as a constraint (which runs the MATCH once per listed id).
        kept, params = kept_sql(filter, scope, "+rowid")
        where = f"fts MATCH ? AND {kept}" if kept else "fts MATCH ?"
        sql = f"SELECT rowid, {self._BM25} AS s FROM fts WHERE {where} ORDER BY s"
        with self._lock:
            rows = self._conn.execute(sql + " LIMIT ?", (match, *params, limit + 1)).fetchall()
            if len(rows) > limit and rows[limit][1] == rows[limit - 1][1]:
                # A tie across the cut: read on past it (rare: duplicated text).
                rows = []
                for rowid, score in self._conn.execute(sql, (match, *params)):
                    if len(rows) >= limit and score != rows[-1][1]:
                        break
                    rows.append((rowid, score))
            keys = self.keys(r[0] for r in rows)
        rows.sort(key=lambda r: (r[1], keys.get(int(r[0]), ("", 0))))
        return [(int(r[0]), -float(r[1])) for r in rows[:limit]]

    @_healing
    def matching(
        self, match: str, filter: SearchFilter | None = None, scope: Scope | None = None
    ) -> set[int]:
        """Every chunk id matching an FTS5 expression (to filter vector candidates by mode),
        of the notes `filter` keeps."""
        kept, params = kept_sql(filter, scope, "+rowid")  # see `lexical`
        where = f"fts MATCH ? AND {kept}" if kept else "fts MATCH ?"
        sql = f"SELECT rowid FROM fts WHERE {where}"
        with self._lock:
            return {int(r[0]) for r in self._conn.execute(sql, (match, *params))}

    @_healing
    def filtered(self, filter: SearchFilter, scope: Scope | None = None) -> set[int] | None:
        """Every searchable chunk id of the notes `filter` keeps; None when it keeps all."""
        kept, params = kept_sql(filter, scope, "c.id")
        if not kept:
            return None
        sql = f"SELECT c.id FROM chunks c JOIN notes n USING(note_id) WHERE n.state='ok' AND {kept}"
        with self._lock:
            return {int(r[0]) for r in self._conn.execute(sql, params)}

    @_healing
    def chunks_of(self, note_ids: Iterable[str]) -> set[int]:
        """The chunk ids of these notes."""
        wanted = json.dumps(sorted(set(note_ids)), ensure_ascii=False)
        sql = "SELECT id FROM chunks WHERE note_id IN (SELECT value FROM json_each(?))"
        with self._lock:
            return {int(r[0]) for r in self._conn.execute(sql, (wanted,))}

    def _rows_of(self, ids: Iterable[int], sql: str) -> list[tuple[Any, ...]]:
        """The rows of `sql` for chunk `ids`, asked 500 at a time (`{marks}` in `sql` stands
        for their placeholders)."""
        wanted = list(dict.fromkeys(ids))
        rows: list[tuple[Any, ...]] = []
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                rows += self._conn.execute(sql.format(marks=marks), part).fetchall()
        return rows

    @_healing
    def keys(self, ids: Iterable[int]) -> dict[int, tuple[str, int]]:
        """(note id, chunk ordinal) by chunk id: the order of equal scores."""
        sql = "SELECT id, note_id, ord FROM chunks WHERE id IN ({marks})"
        return {int(c): (str(n), int(o)) for c, n, o in self._rows_of(ids, sql)}

    @_healing
    def note_times(self, ids: Iterable[int]) -> dict[int, tuple[str, int]]:
        """Each chunk's note id and the note's time (its last update, Unix ms), by chunk id."""
        sql = (
            "SELECT c.id, c.note_id, n.updated_at FROM chunks c JOIN notes n USING(note_id) "
            "WHERE c.id IN ({marks})"
        )
        return {int(c): (str(n), int(t)) for c, n, t in self._rows_of(ids, sql)}

    @_healing
    def chunks(self, ids: Iterable[int]) -> dict[int, ChunkRow]:
        """Chunk rows with their note's revision, summary, type and tags, by chunk id."""
        wanted = list(dict.fromkeys(ids))
        out: dict[int, ChunkRow] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for r in self._conn.execute(
                    "SELECT c.id, c.note_id, c.ord, c.chunk_hash, c.start, c.end_, c.text, n.rev, "
                    "n.summary, n.updated_at, n.type, n.tags FROM chunks c "
                    f"JOIN notes n USING(note_id) WHERE c.id IN ({marks})",
                    part,
                ):
                    out[int(r[0])] = ChunkRow(
                        chunk_id=int(r[0]),
                        note_id=r[1],
                        ord=r[2],
                        chunk_hash=r[3],
                        start=r[4],
                        end=r[5],
                        text=r[6],
                        rev=r[7],
                        summary=r[8],
                        updated_at=r[9],
                        type=NoteType(r[10]) if r[10] else None,
                        tags=tuple(json.loads(r[11])),
                    )
        return out

    @_healing
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

    @_healing
    def doc_freq(self, terms: Iterable[str]) -> tuple[dict[str, int], int]:
        """(chunks containing each term, number of chunks)."""
        wanted = list(dict.fromkeys(terms))
        with self._lock:
            total = self._cached(
                "total",
                lambda: int(self._conn.execute("SELECT count(*) FROM chunks").fetchone()[0]),
            )
            assert isinstance(total, int)
            if not wanted:
                return {}, total
            marks = ",".join("?" * len(wanted))
            rows = self._conn.execute(
                f"SELECT term, doc FROM fts_vocab WHERE term IN ({marks})", wanted
            ).fetchall()
        return {str(t): int(d) for t, d in rows}, total

    @_healing
    def superseded(self) -> dict[str, str]:
        """note id → the id of a live note that supersedes it."""

        def compute() -> dict[str, str]:
            out: dict[str, str] = {}
            for note_id, sup in self._conn.execute(
                "SELECT note_id, supersedes FROM notes WHERE state='ok' AND supersedes != '[]' "
                "ORDER BY note_id"
            ):
                for old in json.loads(sup):
                    out.setdefault(old, note_id)
            return out

        value = self._cached("superseded", compute)
        assert isinstance(value, dict)
        return dict(value)

    @_healing
    def counts(self) -> dict[str, int]:
        """Rows per table, for status and tests."""
        with self._lock:
            return {
                t: int(self._conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
                for t in ("notes", "chunks", "fts", "vectors")
            }

    @_healing
    def note_ids(self) -> set[str]:
        """Ids of searchable notes."""
        with self._lock:
            return {r[0] for r in self._conn.execute("SELECT note_id FROM notes WHERE state='ok'")}

    @_healing
    def unparsed_ids(self) -> set[str]:
        """Ids of the files indexed as not being notes (they cannot be parsed)."""
        with self._lock:
            return {r[0] for r in self._conn.execute("SELECT note_id FROM notes WHERE state='bad'")}

    @_healing
    def disagreements(self, source: NoteSource) -> list[str]:
        """Where the index does not hold what the files hold now (call right after a
        refresh): a file missing from it or indexed at another revision, a row for a
        file that is gone, chunks or full-text rows that belong to nothing."""
        stamps, _ = source.stamps()
        with self._lock:
            rows = dict(self._conn.execute("SELECT note_id, rev FROM notes").fetchall())
            orphans, unsearchable, stray = self._conn.execute(
                "SELECT (SELECT count(*) FROM chunks WHERE note_id NOT IN "
                "(SELECT note_id FROM notes)), (SELECT count(*) FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM fts WHERE fts.rowid = c.id)), (SELECT count(*) FROM fts "
                "WHERE rowid NOT IN (SELECT id FROM chunks))"
            ).fetchone()
        out = mismatches(rows, stamps, source.read_bytes)
        if orphans:
            out.append(f"{orphans} indexed chunks belong to no note")
        if unsearchable:
            out.append(f"{unsearchable} indexed chunks have no full-text row")
        if stray:
            out.append(f"{stray} full-text rows belong to no chunk")
        return out

    # -- vectors ----------------------------------------------------------------------

    @_healing
    def pending(self, embedder: str, limit: int | None = None) -> list[tuple[str, str]]:
        """(embed hash, text to embed) of chunks with no vector from `embedder` yet.

        Most recently updated notes first; "nothing pending" is remembered until the
        index changes, so a query on a fully embedded index does not scan for it.
        """
        sql = (
            "SELECT c.embed_hash, n.summary, c.text FROM chunks c JOIN notes n USING(note_id) "
            "WHERE NOT EXISTS (SELECT 1 FROM vectors v "
            "WHERE v.embedder=? AND v.embed_hash=c.embed_hash) "
            "GROUP BY c.embed_hash ORDER BY n.updated_at DESC, c.embed_hash"
        )
        params: tuple[object, ...] = (embedder,)
        if limit is not None:
            sql += " LIMIT ?"
            params = (embedder, limit)
        with self._lock:
            stamp = self._stamp()
            if self._cache.get("none-pending") == (stamp, embedder):
                return []
            rows = self._conn.execute(sql, params).fetchall()
            if not rows:
                self._cache["none-pending"] = (stamp, embedder)
        return [(r[0], embed_text(r[1], r[2])) for r in rows]

    @_healing
    def vector_progress(self, embedder: str) -> tuple[int, int]:
        """(chunks with a vector from `embedder`, chunks to embed), counted as `pending`
        counts them: by embed hash, so two chunks of the same text count once."""
        with self._lock:
            row = self._conn.execute(
                "SELECT count(DISTINCT c.embed_hash), count(DISTINCT v.embed_hash) "
                "FROM chunks c JOIN notes n USING(note_id) LEFT JOIN vectors v "
                "ON v.embedder=? AND v.embed_hash=c.embed_hash",
                (embedder,),
            ).fetchone()
        return int(row[1]), int(row[0])

    @_healing
    def put_vectors(
        self, embedder: str, hashes: Sequence[str], matrix: npt.NDArray[np.float32]
    ) -> None:
        """Store vectors for embed hashes."""
        data = np.ascontiguousarray(matrix, dtype=np.float32)
        if data.ndim != 2 or data.shape[0] != len(hashes):
            raise ValueError(f"{len(hashes)} hashes but vectors of shape {data.shape}")
        with self.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors(embedder, embed_hash, vec) VALUES (?,?,?)",
                [(embedder, h, data[i].tobytes()) for i, h in enumerate(hashes)],
            )

    @_healing
    def vector_index(self, embedder: str) -> MatrixIndex:
        """The vectors of `embedder` for every searchable chunk, as compact rows whose
        exact float32 vectors are held beside them (a small store) or read from here
        when a query needs them (`memdir.index.vectors`). Rows are in (note id, chunk
        ordinal) order; built once and kept until the index changes."""
        with self._lock:
            stamp = self._stamp()
            if self._vectors is not None and self._vectors[:2] == (embedder, stamp):
                return self._vectors[2]
            self._vectors = None  # let the old rows go before the new ones are built
            count, pairs = vector_rows.searchable(self._conn, embedder)
            unchanged = functools.partial(self._unchanged, stamp)
            got = read_rows(pairs, count, keys=self._ann.wants_keys(count), held_while=unchanged)
            fetch = functools.partial(self._vectors_by_id, embedder)
            index = self._ann.index(embedder, got.ids, got.rows, fetch, held=got.held)
            self._vectors = (embedder, stamp, index)
            if len(got.ids) >= heap.LARGE:
                heap.release()  # the blocks the rows were made from
            return index

    @_healing
    def _unchanged(self, stamp: tuple[int, int]) -> bool:
        with self._lock:
            return self._stamp() == stamp

    @_healing
    def _vectors_by_id(self, embedder: str, ids: Sequence[int]) -> dict[int, bytes]:
        """The float32 vector bytes of the chunks `ids` that have one of `embedder`."""
        with self._lock:
            return vector_rows.by_id(self._conn, embedder, ids)

    def matrix(self, embedder: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(chunk ids, float32 matrix) of `embedder`'s vectors, read whole (tools, tests)."""
        index = self.vector_index(embedder)
        return index.ids, index.matrix

"""§2 history: content-addressed, deduplicated versions of every note on this machine."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest

from memdir import IntegrityError, InvalidInput, Memory, NotFound
from memdir.core import Note, Scope, render_note
from memdir.core.vocab import WriteEvent
from memdir.store import History, revision_of


def objects(root: Path) -> list[Path]:
    return sorted((root / "objects").rglob("*.md")) if (root / "objects").exists() else []


def test_revision_is_the_sha256_of_the_bytes() -> None:
    assert revision_of(b"abc") == hashlib.sha256(b"abc").hexdigest()


def test_same_bytes_are_stored_once(tmp_path: Path) -> None:
    history = History(tmp_path)
    rev1 = history.record("n-1", b"version one", "write", "h1")
    rev2 = history.record("n-1", b"version one", "write", "h1")
    rev3 = history.record("n-1", b"version two", "write", "h2")
    assert rev1 == rev2 == revision_of(b"version one")
    assert rev3 == revision_of(b"version two")
    stored = objects(tmp_path)
    assert len(stored) == 2
    assert {p.read_bytes() for p in stored} == {b"version one", b"version two"}
    assert stored[0].parent.name == stored[0].name[:2]  # objects/<rev[:2]>/<rev>.md
    assert history.has(rev1) and history.read(rev1) == b"version one"


def test_revisions_are_listed_oldest_first_with_events(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record("n-1", b"a", "write", "ha")
    history.record("n-1", b"b", "observed", "hb")
    history.record("n-1", None, "forget")
    history.record("other", b"c", "write", "hc")
    revs = history.revisions("n-1")
    assert [(r.event, r.rev, r.hash) for r in revs] == [
        ("write", revision_of(b"a"), "ha"),
        ("observed", revision_of(b"b"), "hb"),
        ("forget", None, None),
    ]
    assert revs[0].ts <= revs[1].ts <= revs[2].ts
    assert history.revisions("never") == []


def test_repeated_observations_of_one_version_are_collapsed(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record("n-1", b"a", "observed", "ha")
    history.record("n-1", b"a", "observed", "ha")  # two processes saw the same edit
    history.observe("n-1", b"a", "ha")  # already stored: not logged again
    assert len(history.revisions("n-1")) == 1
    history.observe("n-1", b"b", "hb")
    assert [r.event for r in history.revisions("n-1")] == ["observed", "observed"]


def colliding_pair() -> tuple[bytes, bytes]:
    """Two payloads whose revisions share their first four hex digits."""
    seen: dict[str, bytes] = {}
    i = 0
    while True:
        data = f"payload {i}".encode()
        prefix = revision_of(data)[:4]
        if prefix in seen:
            return seen[prefix], data
        seen[prefix] = data
        i += 1


def test_revision_prefixes_resolve(tmp_path: Path) -> None:
    history = History(tmp_path)
    a, b = colliding_pair()
    rev_a = history.record("n-1", a, "write")
    rev_b = history.record("n-1", b, "write")
    assert rev_a and rev_b and rev_a[:4] == rev_b[:4]
    assert history.resolve("n-1", rev_a) == rev_a
    assert history.resolve("n-1", rev_a.upper()) == rev_a
    assert history.resolve("n-1", f"  {rev_a[:12]} ") == rev_a
    n = next(i for i in range(5, 64) if rev_a[:i] != rev_b[:i])
    assert history.resolve("n-1", rev_a[:n]) == rev_a
    assert history.resolve("n-1", rev_b[:n]) == rev_b
    with pytest.raises(InvalidInput, match="ambiguous"):
        history.resolve("n-1", rev_a[:4])
    with pytest.raises(InvalidInput, match="at least 4 hex"):
        history.resolve("n-1", rev_a[:3])
    with pytest.raises(InvalidInput, match="at least 4 hex"):
        history.resolve("n-1", "xyz12")
    with pytest.raises(InvalidInput):
        history.resolve("n-1", "../../etc")
    missing = next(c * 4 for c in "0123456789abcdef" if not rev_a.startswith(c * 4))
    with pytest.raises(NotFound):
        history.resolve("n-1", missing)
    with pytest.raises(NotFound):
        history.resolve("other", rev_a[:8])  # revisions belong to their note


def test_reading_a_missing_revision_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="not stored"):
        History(tmp_path).read("ab" * 32)


def test_purge_removes_objects_and_log_but_not_other_notes(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record("n-1", b'---\n{"id":"n-1"}\n---\none', "write")
    history.record("n-1", b'---\n{"id":"n-1"}\n---\ntwo', "write")
    history.record("n-1", None, "forget")
    keep = history.record("n-2", b'---\n{"id":"n-2"}\n---\n', "write")
    assert len(history.leftovers("n-1")) == 3  # the log and two objects
    assert history.purge("n-1") == 2
    assert history.revisions("n-1") == []
    assert history.leftovers("n-1") == []
    assert not (tmp_path / "log" / "n-1.jsonl").exists()
    assert keep and history.read(keep)
    assert history.purge("n-1") == 0


def test_a_torn_log_line_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record("n-1", b"a", "write")
    log = tmp_path / "log" / "n-1.jsonl"
    with log.open("ab") as f:
        f.write(b'{"ts":1,"event":"wri')  # a crash in the middle of an append
    history.record("n-1", b"b", "write")
    assert [r.rev for r in history.revisions("n-1")] == [revision_of(b"a"), revision_of(b"b")]


def test_log_lines_that_are_not_revisions_are_ignored(tmp_path: Path) -> None:
    history = History(tmp_path)
    rev = history.record("n-1", b"a", "write")
    log = tmp_path / "log" / "n-1.jsonl"
    with log.open("ab") as f:
        for junk in (
            b"not json",
            b"[1,2]",
            b'"text"',
            b'{"ts":"x","event":"write"}',
            b'{"ts":1,"event":"write","rev":"../../../outside"}',
            b'{"ts":1,"event":"write","rev":"ABCD"}',
            b"\xff\xfe",
        ):
            f.write(junk + b"\n")
    assert [r.rev for r in history.revisions("n-1")] == [rev]
    with pytest.raises(NotFound):
        history.resolve("n-1", "abcd")


def test_history_files_are_private(tmp_path: Path) -> None:
    history = History(tmp_path / "h")
    rev = history.record("n-1", b"a", "write")
    assert rev is not None
    obj = tmp_path / "h" / "objects" / rev[:2] / f"{rev}.md"
    assert stat.S_IMODE(obj.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "h" / "log" / "n-1.jsonl").stat().st_mode) == 0o600
    for directory in ("h", "h/objects", f"h/objects/{rev[:2]}", "h/log"):
        assert stat.S_IMODE((tmp_path / directory).stat().st_mode) & 0o077 == 0, directory


def test_log_lines_are_one_json_object_each(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record("n-1", b"a", "write", "h")
    (line,) = (tmp_path / "log" / "n-1.jsonl").read_text().splitlines()
    assert set(json.loads(line)) == {"ts", "event", "rev", "hash"}


# --- through the store and the Memory facade ---------------------------------------------------


def test_every_write_is_recorded_and_unchanged_writes_are_not(memory: Memory) -> None:
    first = memory.remember("Cache invalidation rule", body="one", id="cache-1")
    second = memory.remember("Cache invalidation rule", body="two", id="cache-1")
    same = memory.remember("Cache invalidation rule", body="two", id="cache-1")
    assert same.changed is False and same.revision == second.revision
    entries = memory.notes.history("cache-1")
    assert [(e.revision, e.event) for e in entries] == [
        (first.revision, "write"),
        (second.revision, "write"),
    ]
    assert [e.current for e in entries] == [False, True]
    assert memory.read("cache-1", revision=first.revision[:6]).body == "one"
    assert "-one" in memory.notes.diff("cache-1") and "+two" in memory.notes.diff("cache-1")


def test_external_edits_are_recorded_as_observed_by_a_scan(memory: Memory) -> None:
    written = memory.remember("Deploy checklist", body="step one", id="deploy-1")
    path = written.note.path
    assert path is not None
    store = memory.stores.store(Scope.PROJECT)
    store.scan()
    edited = Note(id="deploy-1", summary="Deploy checklist", body="step one\nstep two by hand")
    data = render_note(edited)
    path.write_bytes(data)
    store.scan()
    revisions = store.history.revisions("deploy-1")
    assert [r.event for r in revisions] == ["write", "observed"]
    assert revisions[-1].rev == revision_of(data)
    assert revisions[-1].hash == edited.hash
    assert store.history.read(revision_of(data)) == data
    store.scan()  # seen once, logged once
    assert len(store.history.revisions("deploy-1")) == 2
    entries = memory.notes.history("deploy-1")
    assert entries[-1].current and entries[-1].event == "observed"


def test_a_file_edited_and_then_overwritten_keeps_the_hand_edit(memory: Memory) -> None:
    written = memory.remember("Style guide", body="v1", id="style-1")
    assert written.note.path is not None
    hand = render_note(Note(id="style-1", summary="Style guide", body="v1 plus a hand edit"))
    written.note.path.write_bytes(hand)
    memory.remember("Style guide", body="v3", id="style-1")  # no scan in between
    entries = memory.notes.history("style-1")
    assert [e.event for e in entries] == ["write", "observed", "write"]
    assert entries[1].revision == revision_of(hand)


def test_forget_is_logged_and_purge_scrubs_history(memory: Memory) -> None:
    memory.remember("Temporary note", body="x", id="temp-1")
    memory.forget("temp-1")
    assert [e.event for e in memory.notes.history("temp-1")][-1] == "forget"
    memory.remember("Temporary note", body="again", id="temp-1")
    memory.forget("temp-1", purge=True)
    with pytest.raises(NotFound):
        memory.notes.history("temp-1")
    assert memory.stores.store(Scope.PROJECT).history.leftovers("temp-1") == []


def test_project_and_user_histories_are_separate(memory: Memory, home: Path) -> None:
    memory.remember("I prefer short answers", type="user", id="prefs-1")
    memory.remember("Project constraint", id="constraint-1")
    user_root = home / "memory-history" / "user"
    assert (user_root / "log" / "prefs-1.jsonl").exists()
    assert not (user_root / "log" / "constraint-1.jsonl").exists()
    project_logs = list((home / "memory-history").glob("project-*/log/constraint-1.jsonl"))
    assert len(project_logs) == 1


# --- objects are verified against their names -----------------------------------------------


def _tamper(path: Path, secret: bytes = b"TAMPERED-WORD") -> None:
    path.write_bytes(path.read_bytes().replace(b"Body", secret, 1) + b"\n" + secret)


def test_an_edited_object_is_refused_naming_it_not_its_content(tmp_path: Path) -> None:
    history = History(tmp_path)
    good = history.record("n-1", b"Body one", "write", "h1")
    bad = history.record("n-1", b"Body two", "write", "h2")
    assert good is not None and bad is not None
    [obj] = [p for p in objects(tmp_path) if p.name == f"{bad}.md"]
    _tamper(obj)
    with pytest.raises(IntegrityError) as refused:
        history.read(bad)
    assert str(obj) in str(refused.value) and bad[:12] in str(refused.value)
    assert b"TAMPERED" not in str(refused.value).encode()
    assert history.read(good) == b"Body one"  # untouched objects are served
    assert history.verify() == [
        f"history object {obj} does not match its name (edited or damaged on disk)"
    ]


def test_verify_flags_misnamed_objects_and_passes_sound_ones(tmp_path: Path) -> None:
    history = History(tmp_path)
    history.record("n-1", b"one", "write", "h1")
    assert history.verify() == []
    stray = tmp_path / "objects" / "zz" / "not-a-revision.md"
    stray.parent.mkdir()
    stray.write_bytes(b"x")
    assert history.verify() == [f"history object {stray} is not named after a revision"]
    assert History(tmp_path / "none").verify() == []


def test_read_revision_and_diff_refuse_an_edited_object(memory: Memory) -> None:
    first = memory.remember("Versioned", "Body first.", id="versioned")
    second = memory.remember("Versioned", "Body second.", id="versioned")
    root = memory.home / "memory-history" / memory.stores.store(Scope.PROJECT).state_key
    _tamper(root / "objects" / first.revision[:2] / f"{first.revision}.md")
    with pytest.raises(IntegrityError, match="does not match its name") as refused:
        memory.read("versioned", first.revision)
    assert "TAMPERED" not in str(refused.value)
    with pytest.raises(IntegrityError):
        memory.notes.diff("versioned")  # previous version (the edited one) against the current
    with pytest.raises(IntegrityError):
        memory.notes.diff("versioned", first.revision[:8], second.revision[:8])
    assert memory.read("versioned", second.revision).body == "Body second."
    assert memory.read("versioned").body == "Body second."


def test_a_version_logged_but_never_stored_is_stored_when_seen(memory: Memory) -> None:
    # A writer killed after logging its new version and before storing its bytes: the
    # file on disk holds that version, and history has a line without an object.
    first = memory.remember("Killed writer note", body="version one")
    store = memory.stores.store(Scope.PROJECT)
    path = store.directory.file_for(first.note.id)
    newer = path.read_bytes().replace(b"version one", b"version two")
    rev = revision_of(newer)
    store.history.record(first.note.id, newer, WriteEvent.WRITE)
    obj = store.history.root / "objects" / rev[:2] / f"{rev}.md"  # the documented layout
    obj.unlink()
    assert [e.revision for e in memory.notes.history(first.note.id)] == [first.revision]
    path.write_bytes(newer)
    entries = memory.notes.history(first.note.id)
    assert entries[-1].revision == rev and entries[-1].current
    assert store.history.latest(first.note.id) == rev
    assert memory.read(first.note.id, revision=rev).body == "version two"


def test_a_version_observed_just_before_its_writer_logged_it_is_listed_once(
    tmp_path: Path,
) -> None:
    # A reader that scans between a writer's rename and its log line records the new
    # file as observed; the writer's entry follows for the same bytes.
    history = History(tmp_path / "h")
    history.record("n-1", b"one", WriteEvent.WRITE)
    history.record("n-1", b"two", WriteEvent.OBSERVED)
    history.record("n-1", b"two", WriteEvent.WRITE)
    history.record("n-1", b"two", WriteEvent.OBSERVED)
    events = [(r.event, r.rev) for r in history.revisions("n-1")]
    assert events == [("write", revision_of(b"one")), ("write", revision_of(b"two"))]


def test_a_file_put_back_to_an_older_version_is_recorded_again(project: Path, home: Path) -> None:
    from memdir import Memory

    m = Memory.open(project, home=home)
    m.remember("Deploys go through staging", body="first", id="deploys")
    path = project / "MEMORY" / "deploys.md"
    first = path.read_bytes()
    m.remember("Deploys go through staging", body="second", id="deploys")
    path.write_bytes(first)  # a revert by hand (or a restore killed before its log line)
    m.notes.list()
    entries = m.notes.history("deploys")
    assert entries[-1].current and entries[-1].event == "observed"
    # ...and a file back after its deletion was logged is not called deleted.
    m.forget("deploys")
    path.write_bytes(first)
    m.notes.list()
    assert m.notes.history("deploys")[-1].current

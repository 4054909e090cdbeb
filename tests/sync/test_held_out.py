"""A note held back by a sync conflict stays out of search, retrieve, recall and the index."""

from __future__ import annotations

from memdir import Memory

from .conftest import Pair


def _edit(memory: Memory, note_id: str, old: str, new: str) -> None:
    path = memory.read(note_id).path
    assert path is not None
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def test_conflicted_note_is_hidden_from_agents_until_resolved(pair: Pair) -> None:
    a, b = pair.a, pair.b
    note = a.remember(
        "Zebra crossing rule for the quokka project",
        body="quokka zebra line one\nline two\nline three",
        scope="user",
    ).note
    a.sync.run()
    b.sync.run()
    _edit(a, note.id, "line two", "line two from a")
    _edit(b, note.id, "line two", "line two from b")
    a.sync.run()
    run = b.sync.run()
    assert run.conflicts == 1
    assert [v.id for v in b.sync.conflicts()] == [note.id]
    # The local file is still there and listed, but agents do not see it.
    assert note.id in {n.id for n in b.notes.list(scope="user")}
    assert note.id not in {h.note_id for h in b.search("quokka zebra", method="lexical")}
    assert note.id not in {c.note_id for c in b.index.retrieve("quokka zebra", method="lexical")}
    assert note.id not in b.agent.prompt_index()
    assert note.id not in b.recall("what is the zebra crossing rule for quokka?").note_ids
    assert note.id in {h.note_id for h in a.search("quokka zebra", method="lexical")}
    assert note.id in a.recall("what is the zebra crossing rule for quokka?").note_ids

    b.sync.resolve(note.id, "local")
    assert note.id in {h.note_id for h in b.search("quokka zebra", method="lexical")}
    assert note.id in b.agent.prompt_index()

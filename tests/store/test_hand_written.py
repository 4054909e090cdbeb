"""Notes written by hand (§1.1): YAML frontmatter (Claude Code's memory files, Obsidian,
basic-memory) and plain Markdown are notes — listed, searched and read, the file left as
the person wrote it until memdir rewrites the note (then in memdir's form, with a backup);
files that still cannot be read are named once per command on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from memdir import Memory
from memdir.cli.main import main
from memdir.core.frontmatter import body_span, is_canonical_form, parse_note
from memdir.core.note import normalize_body

CLAUDE_CODE = (
    b"---\nname: Testing approach\n"
    b"description: Use pytest with real SQLite files, never mocks\ntype: feedback\n---\n\n"
    b"**Why:** mocks hid a broken migration last quarter.\n"
)
OBSIDIAN = (
    b'---\ntags: [design, "#pricing"]\ncreated: 2025-03-01\naliases:\n  - cards\n---\n'
    b"# Pricing cards\r\n\r\nCards are separated by fills, not borders.\r\n"
)
BASIC_MEMORY = (
    b"---\ntitle: Deploy schedule\ntype: note\npermalink: deploy-schedule\n"
    b"tags:\n- ops\n---\n\nDeploys go out on Tuesdays after the freeze.\n"
)
PLAIN = "\ufeff## Standup\n\nStandup is at 9:30 in the Kestrel room.\n".encode()
PLAIN_NO_HEADING = b"- The VPN needs the *new* client since March.\n- Old one fails.\n"
HAND_WRITTEN = {
    "testing-approach": CLAUDE_CODE,
    "pricing-cards": OBSIDIAN,
    "deploy-schedule": BASIC_MEMORY,
    "standup": PLAIN,
    "vpn-client": PLAIN_NO_HEADING,
}


@pytest.fixture
def folder(project: Path) -> Path:
    path = project / "MEMORY"
    path.mkdir()
    for note_id, data in HAND_WRITTEN.items():
        (path / f"{note_id}.md").write_bytes(data)
    return path


def test_hand_written_notes_are_listed_searched_and_read_as_written(
    folder: Path, project: Path, home: Path
) -> None:
    memory = Memory.open(project, home=home)
    notes = {n.id: n for n in memory.notes.list()}
    assert set(notes) == set(HAND_WRITTEN)
    assert notes["testing-approach"].summary == (
        "Testing approach: Use pytest with real SQLite files, never mocks"
    )
    assert notes["testing-approach"].type is not None
    assert notes["testing-approach"].type.value == "feedback"
    assert notes["pricing-cards"].summary == "Pricing cards"
    assert set(notes["pricing-cards"].tags) == {"design", "pricing"}
    assert notes["pricing-cards"].created_at == 1740787200000
    assert notes["deploy-schedule"].summary == "Deploy schedule"
    assert notes["deploy-schedule"].type is None  # basic-memory's "note" is kept, not lost
    assert ("sourceType", "note") in notes["deploy-schedule"].extra
    assert notes["standup"].summary == "Standup"
    assert notes["vpn-client"].summary == "The VPN needs the new client since March."
    for query, wanted in (
        ("mocks migration", "testing-approach"),
        ("Kestrel room", "standup"),
        ("Tuesdays freeze", "deploy-schedule"),
    ):
        assert memory.search(query, method="lexical")[0].note_id == wanted
    assert "Kestrel" in memory.read("standup").body
    memory.close()
    for note_id, data in HAND_WRITTEN.items():
        assert (folder / f"{note_id}.md").read_bytes() == data  # never rewritten by reading
    assert not any("could not be read" in w for w in memory.warnings)


def test_a_rewrite_uses_memdirs_form_and_backs_up_the_hand_written_file(
    folder: Path, project: Path, home: Path
) -> None:
    memory = Memory.open(project, home=home)
    written = memory.remember(
        "Testing approach: real files, never mocks", "Updated.", id="testing-approach"
    )
    data = (folder / "testing-approach.md").read_bytes()
    assert is_canonical_form(data)
    doc = json.loads(data.decode().split("\n")[1])
    assert doc["name"] == "Testing approach"  # the person's own keys are kept
    backups = [b for b in memory.backups() if b.note_id == "testing-approach"]
    assert len(backups) == 1 and backups[0].reason == "rewritten from the form written by hand"
    assert memory.stores.backups.get(backups[0].id)[1] == CLAUDE_CODE
    # a second rewrite of a note already in memdir's form backs nothing up
    memory.remember(written.note.summary, "Again.", id="testing-approach")
    assert len([b for b in memory.backups() if b.note_id == "testing-approach"]) == 1
    memory.close()


def test_skipped_files_are_named_once_on_stderr(
    folder: Path, project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "broken.md").write_bytes(b"---\ntitle: [unclosed\n---\nbody\n")
    (folder / "binary.md").write_bytes(b"\x00\x01")
    monkeypatch.chdir(project)
    for args in (["list"], ["search", "Kestrel"]):
        result = CliRunner().invoke(main, ["--project", str(project), *args])
        assert result.exit_code == 0, result.output
        lines = [line for line in result.stderr.splitlines() if "could not be read" in line]
        assert len(lines) == 1, result.stderr
        assert "2 files in the project notes" in lines[0]
        assert "binary.md, broken.md" in lines[0] and "memdir doctor" in lines[0]
    listed = CliRunner().invoke(main, ["--project", str(project), "list", "--json"])
    assert {n["id"] for n in json.loads(listed.stdout)} == set(HAND_WRITTEN)


LINES = st.lists(
    st.text(
        st.characters(codec="utf-8", exclude_characters="\x00\r\n\x85\u2028\u2029"), max_size=40
    ),
    min_size=1,
    max_size=6,
)


@given(LINES, st.booleans())
def test_a_plain_or_yaml_note_body_is_where_body_span_says(lines: list[str], yaml: bool) -> None:
    body = "\n".join(lines)
    text = ("---\ntitle: t\n---\n" if yaml else "") + body + "\n"
    data = text.encode()
    try:
        note = parse_note(data, file_id="n-1")
    except Exception as exc:  # a body holding no line of text, or a stray fence
        from memdir.errors import ParseError

        assert isinstance(exc, ParseError)
        return
    start, end = body_span(data)
    assert normalize_body(data[start:end].decode()) == note.body
    assert note.summary.strip() and "\n" not in note.summary


# -- what a hostile review found -------------------------------------------------------------

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.mark.parametrize(
    "data",
    [
        b'<<<<<<< HEAD\n---\n{"id":"x-1","summary":"a"}\n---\nA\n=======\nB\n>>>>>>> feature\n',
        b"Use pnpm.\n<<<<<<< HEAD\nonly pnpm\n=======\nnpm is fine\n>>>>>>> other\n",
        b'{"id":"x-1","summary":"a"}\n---\nbody\n',  # the opening fence lost
        b'--\n{"id":"x-1","summary":"a"}\n---\nbody\n',  # the opening fence damaged
    ],
    ids=["conflict around a note", "conflict in plain text", "fence lost", "fence damaged"],
)
def test_a_damaged_note_or_a_merge_conflict_is_no_note(data: bytes) -> None:
    from memdir.errors import ParseError

    with pytest.raises(ParseError):
        parse_note(data, file_id="x-1")


@pytest.mark.parametrize(
    "head",
    [
        f"title: t\n# token {TOKEN}",
        f"title: t\nupdatedAt: {TOKEN}",
        f"summary: [{TOKEN}]",
        f"type: {TOKEN}\nsourceType: y",
        f"tags:\n  nested: {TOKEN}",
    ],
    ids=["comment", "unreadable time", "summary as a list", "type beside sourceType", "tags map"],
)
def test_nothing_of_a_yaml_head_escapes_the_guard(head: str) -> None:
    """Every key, value and comment of a hand-written head is kept in the note, so the
    guard (locally, and on the sync server) reads it."""
    from memdir.errors import SecretRefused
    from memdir.store import check_secrets

    note = parse_note(f"---\n{head}\n---\nbody\n".encode(), file_id="n-1")
    with pytest.raises(SecretRefused):
        check_secrets(note)


def test_times_past_the_calendar_and_unix_seconds(project: Path, home: Path) -> None:
    folder = project / "MEMORY"
    folder.mkdir()
    (folder / "far.md").write_bytes(b"---\nupdated: 9999-12-31T23:59:59-12:00\n---\nbody\n")
    (folder / "secs.md").write_bytes(b"---\ncreated: 1700000000\n---\nbody\n")
    memory = Memory.open(project, home=home)
    notes = {n.id: n for n in memory.notes.list()}
    assert notes["secs"].created_at == 1_700_000_000_000
    assert notes["far"].updated_at < 253_402_300_800_000
    result = CliRunner().invoke(main, ["--project", str(project), "--home", str(home), "list"])
    assert result.exit_code == 0 and "Traceback" not in result.output
    memory.close()


def test_a_legacy_bidi_summary_restores_and_keeps_its_summary_on_a_body_edit(
    project: Path, home: Path
) -> None:
    """The bidi rule is for summaries written anew: a backup of an older note restores, and
    editing only its body keeps the summary it had."""
    from memdir.errors import InvalidInput

    folder = project / "MEMORY"
    folder.mkdir()
    summary = "שלום \u200fעולם: use pnpm"
    (folder / "rtl-note.md").write_text(f"# {summary}\n\nBody.\n", encoding="utf-8")
    memory = Memory.open(project, home=home)
    assert memory.read("rtl-note").summary == summary
    memory.remember(summary, "Edited body.", id="rtl-note")  # the summary it already had
    backup = memory.forget("rtl-note").backup
    assert backup is not None
    memory.backups.restore(backup.id)
    assert memory.read("rtl-note").summary == summary
    with pytest.raises(InvalidInput, match="bidirectional"):
        memory.remember("new \u202e summary", "x", id="rtl-other")
    memory.close()


def test_two_readers_logging_one_version_do_not_make_it_an_edit(project: Path, home: Path) -> None:
    folder = project / "MEMORY"
    folder.mkdir()
    (folder / "old-note.md").write_bytes(
        b'---\n{"id":"old-note","summary":"Old","updatedAt":1577836800000}\n---\nx\n'
    )
    for _ in range(3):  # each process logs the version it saw (a race leaves duplicates)
        first = Memory.open(project, home=home)
        store = first.stores.store(first.scopes[0])
        data = (folder / "old-note.md").read_bytes()
        store.history.record(
            "old-note", data, "observed", parse_note(data, file_id="old-note").hash
        )
        first.close()
    again = Memory.open(project, home=home)
    assert [n.updated_at for n in again.notes.list()] == [1577836800000]
    again.close()


def test_a_home_that_cannot_keep_a_pending_id_reads_on_and_refuses_writes(
    tmp_path: Path,
) -> None:
    import subprocess

    repo = tmp_path / "repo"
    (repo / "MEMORY").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "MEMORY" / "a-note.md").write_bytes(b"# A note\n\nKestrel.\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / "projects").write_text("not a folder")
    for args, code in ((["list"], 0), (["search", "Kestrel"], 0), (["remember", "New"], 2)):
        result = CliRunner().invoke(main, ["--project", str(repo), "--home", str(home), *args])
        assert result.exit_code == code, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (repo / ".memdir").exists()

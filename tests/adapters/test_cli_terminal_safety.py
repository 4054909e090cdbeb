"""Issue 24, failure 6: control sequences in notes, file names and archive members never
reach the terminal raw.

Every command here runs without a terminal (CliRunner), where rich writes no styling of
its own, so the output may hold no ESC at all — nor BEL, a C1 control or a bidirectional
formatting character. `--json` output parses back to the exact text, and the note files
keep their bytes.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from memdir.cli.errors import report_error
from memdir.errors import EXIT_REFUSED, EXIT_USAGE, MemdirError

Invoke = Callable[..., Result]

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")

OSC52 = "\x1b]52;c;aGFja2Vk\x07"  # write "hacked" to the clipboard
CLEAR = "\x1b[2J"  # clear the screen
TITLE = "\x1b]0;pwned\x07"  # set the window title
RLO = "\u202e"  # right-to-left override
CSI = "\x9b31m"  # C1 CSI: red
HOSTILE = f"{OSC52} {CLEAR} {TITLE} {RLO}gnp.exe {CSI}"
SUMMARY = f"Deploy {RLO}gnp.exe\u202c checklist"  # saved before summaries refused bidi
BODY = f"Deploy steps: {HOSTILE}\nthen the release\twith a tab"


def shown_safely(result: Result) -> str:
    """The command's stdout and stderr, checked to hold nothing a terminal acts on."""
    out = result.stdout + result.stderr
    assert "Traceback" not in out
    found = sorted({f"U+{ord(c):04X}" for c in UNSAFE.findall(out)})
    assert not found, (found, out)
    return out


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


@pytest.fixture
def hostile(cli: Invoke, project: Path, home: Path) -> tuple[Path, bytes]:
    """A note written by hand (another tool, a git pull) with control sequences in its body
    and a right-to-left override in its summary; its path and bytes."""
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    folder = project / "MEMORY"
    folder.mkdir()
    head = json.dumps({"id": "hostile", "summary": SUMMARY}, ensure_ascii=False)
    path = folder / "hostile.md"
    path.write_bytes(f"---\n{head}\n---\n{BODY}\n".encode())
    return path, path.read_bytes()


VISIBLE = ["␛]52;c;aGFja2Vk␇", "␛[2J", "␛]0;pwned␇", "<U+202E>gnp.exe", "<U+009B>31m"]


@pytest.mark.parametrize(
    ("args", "visible"),
    [
        (("read", "hostile"), [*VISIBLE, "Deploy <U+202E>gnp.exe<U+202C> checklist", "release"]),
        (("list",), ["Deploy <U+202E>gnp.exe<U+202C> checklist"]),
        (("search", "deploy"), [*VISIBLE, "Deploy <U+202E>gnp.exe<U+202C> checklist"]),
        (("search", "deploy", "--method", "lexical"), VISIBLE),
        (("retrieve", "deploy"), VISIBLE),
        (("index",), ["Deploy <U+202E>gnp.exe<U+202C> checklist"]),
        (("recall", "deploy steps release checklist"), ["␛[2J"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_note_text_is_shown_visibly_never_obeyed(
    cli: Invoke, hostile: tuple[Path, bytes], args: tuple[str, ...], visible: list[str]
) -> None:
    path, before = hostile
    out = shown_safely(ok(cli(*args)))
    for piece in visible:
        assert piece in out, (piece, out)
    assert path.read_bytes() == before


def test_json_output_escapes_and_round_trips_the_exact_text(
    cli: Invoke, hostile: tuple[Path, bytes]
) -> None:
    path, before = hostile
    read = ok(cli("read", "hostile", "--json"))
    shown_safely(read)
    note = json.loads(read.stdout)
    assert (note["summary"], note["body"]) == (SUMMARY, BODY)
    assert "\\u202e" in read.stdout and "\\u009b" in read.stdout and "\\u001b" in read.stdout

    listed = ok(cli("list", "--json"))
    shown_safely(listed)
    assert [n["summary"] for n in json.loads(listed.stdout)] == [SUMMARY]

    found = ok(cli("search", "deploy", "--json"))
    shown_safely(found)
    (hit,) = json.loads(found.stdout)
    assert hit["summary"] == SUMMARY and OSC52 in hit["snippet"] and CSI in hit["snippet"]

    chunks = ok(cli("retrieve", "deploy", "--json"))
    shown_safely(chunks)
    assert any(HOSTILE in c["text"] for c in json.loads(chunks.stdout))
    assert path.read_bytes() == before


def test_a_diff_of_two_versions_is_shown_visibly(cli: Invoke, home: Path) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    ok(cli("remember", "Release steps", "--id", "steps", "--body", f"one {CLEAR}"))
    ok(cli("remember", "Release steps", "--id", "steps", "--body", f"two {TITLE}"))
    out = shown_safely(ok(cli("diff", "steps")))
    assert "-one ␛[2J" in out and "+two ␛]0;pwned␇" in out
    doc = json.loads(ok(cli("diff", "steps", "--json")).stdout)
    assert f"+two {TITLE}" in doc["diff"]


def test_a_summary_with_a_bidi_character_is_refused_when_written(
    cli: Invoke, hostile: tuple[Path, bytes], project: Path
) -> None:
    path, before = hostile
    for char in BIDI:
        result = cli("remember", f"Pay invoice {char}fdp.exe", "--id", "invoice")
        assert result.exit_code == EXIT_USAGE, result.stdout
        out = shown_safely(result)
        assert f"U+{ord(char):04X}" in out and "bidirectional" in out
    as_json = cli("remember", f"Pay {RLO}x", "--json")
    assert json.loads(as_json.stdout)["error"]["type"] == "InvalidInput"
    assert sorted(p.name for p in (project / "MEMORY").iterdir() if p.suffix == ".md") == [
        "hostile.md"
    ]
    # The note saved before the rule loads; a body edit keeps the summary it already had
    # (the rule is for summaries written anew), and a new summary may not hold one.
    assert path.read_bytes() == before
    ok(cli("remember", SUMMARY, "--id", "hostile", "--body", "new"))
    assert json.loads(ok(cli("read", "hostile", "--json")).stdout)["summary"] == SUMMARY
    ok(cli("remember", "Deploy checklist", "--id", "hostile", "--body", "new"))
    assert json.loads(ok(cli("read", "hostile", "--json")).stdout)["summary"] == (
        "Deploy checklist"
    )


def _export_archive(path: Path, member: str) -> Path:
    index = {"format": "memdir-export", "version": 1, "exported_at": 0, "notes": []}
    with tarfile.open(path, "w:gz") as archive:
        for name, data in (
            ("export/index.json", json.dumps(index).encode()),
            (f"export/project/{member}", b'---\n{"summary": "x"}\n---\nbody\n'),
            ("export/project/fine-note.md", b'---\n{"summary": "Fine"}\n---\nbody\n'),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_an_import_report_shows_a_hostile_member_name_visibly(
    cli: Invoke, home: Path, tmp_path: Path
) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    member = f"{OSC52}{CLEAR}{TITLE}{RLO}{CSI}.md"
    archive = _export_archive(tmp_path / "export.tar.gz", member)
    for extra in (("--dry-run",), ()):
        out = shown_safely(ok(cli("import", str(archive), *extra)))
        assert "␛]52;c;aGFja2Vk␇␛[2J␛]0;pwned␇<U+202E><U+009B>31m.md" in out
    report = ok(cli("import", str(archive), "--json", "--dry-run"))
    shown_safely(report)
    sources = [p["source"] for p in json.loads(report.stdout)["problems"]]
    assert f"export/project/{member}" in sources


def test_an_imported_summary_with_a_bidi_character_is_refused(
    cli: Invoke, home: Path, project: Path, tmp_path: Path
) -> None:
    (home / "config.toml").write_text('[embed]\nprovider = "none"\n', encoding="utf-8")
    graph = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "name": f"invoice {RLO}fdp.exe", "entityType": "k"}
    graph.write_text(json.dumps({**entity, "observations": [f"see {CLEAR}"]}) + "\n")
    result = cli("import", str(graph), "--from", "mcp-memory")
    assert result.exit_code == EXIT_REFUSED, (result.stdout, result.stderr)
    out = shown_safely(result)
    assert "U+202E" in out and "<U+202E>" in out
    report = json.loads(cli("import", str(graph), "--from", "mcp-memory", "--json").stdout)
    (refused,) = report["refused"]
    assert "U+202E" in refused["reason"]
    assert not (project / "MEMORY").exists() or not list((project / "MEMORY").glob("*.md"))


def test_an_error_quoting_a_hostile_path_is_shown_visibly(cli: Invoke, tmp_path: Path) -> None:
    gone = tmp_path / f"gone{CLEAR}{TITLE}{RLO}.jsonl"
    result = cli("import", str(gone))
    assert result.exit_code == EXIT_USAGE
    assert "␛[2J␛]0;pwned␇<U+202E>.jsonl" in shown_safely(result)
    as_json = cli("import", str(gone), "--json")
    shown_safely(as_json)
    assert str(gone) in json.loads(as_json.stdout)["error"]["message"]


def test_report_error_neutralises_on_every_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    error = MemdirError(f"note {CLEAR}{RLO}x is damaged")
    report_error(error, as_json=False)
    printed = capsys.readouterr()
    assert "␛[2J<U+202E>x" in printed.err and not UNSAFE.search(printed.out + printed.err)

    class Broken:
        def print(self, *_: object, **__: object) -> None:
            raise OSError("stderr is gone")

    import memdir.cli.output

    monkeypatch.setattr(memdir.cli.output, "err_console", Broken())
    report_error(error, as_json=False)
    fallback = capsys.readouterr().err
    assert fallback == "error: note ␛[2J<U+202E>x is damaged\n"

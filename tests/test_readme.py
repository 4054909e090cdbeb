"""README.md's examples are real: every command of its Quick start and "Using it" shell
blocks runs (in a temporary project and memdir home, in order, each with exit code 0),
the ids they use are ones the examples create, the cross-language search finds the note
it is meant to find, and the Python API example runs as written."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memdir import Memory
from memdir.cli.main import main

README = Path(__file__).resolve().parent.parent / "README.md"

#: Setup steps of the Quick start that install or test memdir itself; not run here.
SETUP = (
    ("python3", "-m", "venv"),
    (".", ".venv/bin/activate"),
    ("pip", "install"),
    ("scripts/test",),
)


def section(title: str) -> str:
    """The text of the README section `## title`, up to the next `## ` heading."""
    text = README.read_text("utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"README.md has no section {title!r}"
    return match.group(1)


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^ *```{language}\n(.*?)^ *```", text, re.M | re.S)


def commands(block: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, `&&`
    chains split."""
    out: list[list[str]] = []
    for line in block.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            out.append(words[:cut])
            words = words[cut + 1 :]
    return out


def is_setup(words: list[str]) -> bool:
    return any(tuple(words[: len(s)]) == s for s in SETUP)


class Shell:
    """Runs the README's commands: `memdir` in-process, `cd` and `git init` for real."""

    def __init__(self, base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cwd = base
        self.monkeypatch = monkeypatch
        self.results: list[tuple[list[str], Result]] = []

    def run(self, words: list[str]) -> Result | None:
        if words[0] == "cd":
            self.cwd = (self.cwd / words[1]).resolve()
            return None
        if words[:2] == ["git", "init"]:
            subprocess.run(words, cwd=self.cwd, check=True, capture_output=True)
            return None
        assert words[0] == "memdir", f"README example {shlex.join(words)!r} is not checked"
        self.monkeypatch.chdir(self.cwd)
        result = CliRunner().invoke(main, words[1:], env={"COLUMNS": "120"})
        assert result.exit_code == 0, (
            f"README example `{shlex.join(words)}` failed ({result.exit_code}):\n"
            f"{result.stdout}\n{result.stderr}"
        )
        self.results.append((words, result))
        return result


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shell:
    monkeypatch.setenv("MEMDIR_HOME", str(tmp_path / "memdir-home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for key, value in {
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }.items():
        monkeypatch.setenv(key, value)
    return Shell(tmp_path, monkeypatch)


def test_the_quick_start_runs(shell: Shell) -> None:
    ran = 0
    for block in blocks(section("Quick start"), "sh"):
        for words in commands(block):
            if not is_setup(words):
                shell.run(words)
                ran += 1
    assert ran == 1  # `memdir demo`; the rest installs and tests memdir itself
    demo = shell.results[0][1]
    assert "audit" in demo.stdout


def test_every_usage_example_runs_in_order(shell: Shell) -> None:
    (usage,) = blocks(section("Using it"), "sh")
    examples = commands(usage)
    assert len(examples) >= 18
    for words in examples:
        shell.run(words)
    outputs = {shlex.join(w): r.stdout for w, r in shell.results}
    assert (
        "pricing-cards" in outputs["memdir list"]
        and "deploys-go-out-on-tuesdays" in (outputs["memdir list"])
    )
    assert outputs["memdir read pricing-c"].startswith("Pricing cards use fills, not borders")
    assert (
        "+Cards are separated by fill, never by a border." in outputs["memdir diff pricing-cards"]
    )
    assert "forgot deploys-go-out-on-tuesdays-" in outputs["memdir forget deploys --yes"]
    assert outputs["memdir backups restore deploys"].startswith(
        "restored deploys-go-out-on-tuesdays-"
    )
    assert "all notes are healthy" in outputs["memdir doctor"]


def test_the_cross_language_example_finds_its_note(shell: Shell) -> None:
    (usage,) = blocks(section("Using it"), "sh")
    examples = commands(usage)
    searches = [w for w in examples if w[:2] == ["memdir", "search"]]
    german = next(w for w in searches if "Rahmen" in w[2])
    for words in examples:
        if words[:2] == ["memdir", "search"]:
            break
        shell.run(words)
    result = shell.run([*german, "--json"])
    assert result is not None
    hits = json.loads(result.stdout)
    assert hits and hits[0]["note_id"] == "pricing-cards", hits
    assert hits[0]["match"] == "meaning"
    # The all-words example finds its note by the words themselves.
    every = next(w for w in searches if "--mode" in w)
    found = shell.run([*every, "--json"])
    assert found is not None
    assert [h["note_id"] for h in json.loads(found.stdout)] == ["pricing-cards"]


def test_the_python_example_runs(shell: Shell, tmp_path: Path) -> None:
    (code,) = blocks(section("Using it"), "python")
    project = tmp_path / "api-project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    shell.monkeypatch.chdir(project)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # our own README's example
    memory = namespace["m"]
    assert isinstance(memory, Memory)
    memory.close()
    assert not list((project / "MEMORY").glob("*.md"))  # the example forgets its note

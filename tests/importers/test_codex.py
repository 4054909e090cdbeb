"""The codex reader: Codex's generated memories folder (handbook blocks, summary sections,
rollout summaries, skills, ad-hoc notes) and its older bucket layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from memdir.core import NoteType
from memdir.errors import InvalidInput
from memdir.importers import base, basic_memory, claude_code, codex
from memdir.importers.base import REF_PATTERN, iso_ms

from . import (
    FIXTURES,
    add_outside_symlinks,
    by_key,
    copy_fixture,
    deny_reads,
    make_unreadable,
    reasons,
    storable,
    tree,
)

HOME = FIXTURES / "codex" / "codex-home"
MEMORIES = HOME / "memories"
LEGACY = FIXTURES / "codex" / "legacy" / "memories"
FLAKY = (
    "rollout_summaries/2026-02-11T15-35-19-0194f5a6-89ab-7cde-8123-456789abcdef"
    "-fix_flaky_checkout_tests.md"
)
RELEASE = "rollout_summaries/2026-03-01T09-00-00-0195aaaa-0000-7000-8000-000000000001-release.md"


def test_kind_and_detection(tmp_path: Path) -> None:
    assert codex.KIND == "codex"
    assert codex.detect(MEMORIES)
    assert codex.detect(HOME)  # the Codex home holding memories/
    assert codex.detect(LEGACY)
    assert not claude_code.detect(MEMORIES)
    assert not basic_memory.detect(MEMORIES)
    for other in ("markdown/vault", "claude-code/-home-ana-shop", "basic-memory/project"):
        assert not codex.detect(FIXTURES / other)
    (tmp_path / "MEMORY.md").write_text("# Task Group: x\n\nscope: y\n", "utf-8")
    assert codex.detect(tmp_path)
    assert not codex.detect(tmp_path / "MEMORY.md")


def test_what_is_read_and_what_is_not() -> None:
    reading = codex.read(HOME)
    assert reading.kind == "codex" and reading.root == MEMORIES
    assert sorted(by_key(reading)) == sorted(
        [
            "MEMORY.md#shop checkout tests (/home/ana/shop)",
            "MEMORY.md#shop checkout tests (/home/ana/shop) (2)",
            "MEMORY.md#发布流程 (/home/ana/shop)",
            "memory_summary.md#User Profile",
            "memory_summary.md#User preferences",
            "memory_summary.md#General Tips",
            FLAKY,
            RELEASE,
            "skills/run-integration-tests/SKILL.md",
            "extensions/ad_hoc/notes/präferenz-ä.md",
            "extensions/ad_hoc/resources/2026-03-01T09-00-00-x.md",
        ]
    )
    resource = by_key(reading)["extensions/ad_hoc/resources/2026-03-01T09-00-00-x.md"]
    assert resource.body == "resource text" and "ad_hoc" in resource.tags
    assert reasons(reading) == {
        "extensions/ad_hoc/notes/latin1.md": "not UTF-8 text (byte 3); not read",
        "rollout_summaries/2026-03-02T10-00-00-empty.md": "empty file; nothing to import",
        "skills/broken/SKILL.md": "frontmatter line 3: a quoted value without its closing"
        " quote; file not imported",
        # every Markdown file left out says why (issue 27: import every item or say why not)
        "raw_memories.md": "Codex's raw per-session memories, the input its consolidation"
        " merges into the handbook (imported from there); not imported",
        "phase2_workspace_diff.md": "Codex's record of its last consolidation's changes, not a"
        " memory; not imported",
        "extensions/ad_hoc/instructions.md": "a file of the ad_hoc extension that is neither a"
        " note (ad_hoc/notes/*.md) nor a resource (resources/*.md), such as its instructions;"
        " not imported",
    }
    for item in reading.items:
        storable(item)
        assert item.origin == item.key.split("#", 1)[0]


def test_handbook_blocks_with_their_times_and_refs() -> None:
    items = by_key(codex.read(MEMORIES))
    block = items["MEMORY.md#shop checkout tests (/home/ana/shop)"]
    assert block.summary == "shop checkout tests (/home/ana/shop)"
    assert block.body.startswith("scope: flaky checkout integration tests")
    assert "## Failures and how to do differently" in block.body
    assert block.created_at == block.updated_at == iso_ms("2026-02-11T16:02:00+00:00")
    assert [r.target for r in block.refs] == [FLAKY]
    assert "- [[ref:0]] (cwd=/home/ana/shop" in block.body
    again = items["MEMORY.md#shop checkout tests (/home/ana/shop) (2)"]
    assert again.summary == block.summary and again.body != block.body
    assert again.updated_at == int((MEMORIES / "MEMORY.md").stat().st_mtime * 1000)
    chinese = items["MEMORY.md#发布流程 (/home/ana/shop)"]
    assert chinese.summary == "发布流程 (/home/ana/shop)"
    assert [r.target for r in chinese.refs] == [RELEASE]


def test_summary_sections_and_user_types() -> None:
    items = by_key(codex.read(MEMORIES))
    profile = items["memory_summary.md#User Profile"]
    assert profile.summary == "User Profile (Codex memory summary)"
    assert profile.type is NoteType.USER
    assert profile.body.startswith("Ana is a backend engineer")
    assert items["memory_summary.md#User preferences"].type is NoteType.USER
    tips = items["memory_summary.md#General Tips"]
    assert tips.type is None
    assert [r.target for r in tips.refs] == [FLAKY]
    assert not any("What's in Memory" in key for key in items)


def test_rollout_summaries_keep_their_session_and_time() -> None:
    items = by_key(codex.read(MEMORIES))
    flaky = items[FLAKY]
    assert flaky.summary == "Fixed the flaky TestCheckoutRace by giving each test its own schema."
    assert flaky.created_at == flaky.updated_at == iso_ms("2026-02-11T16:02:00+00:00")
    assert flaky.body.startswith("Rollout context:")
    assert flaky.body.endswith(
        "Codex session: thread 0194f5a6-89ab-7cde-8123-456789abcdef, cwd /home/ana/shop,"
        " branch fix/checkout-race"
    )
    assert "0194f5a6-89ab-7cde-8123-456789abcdef" in flaky.aliases
    # written with a BOM and CRLF, in Chinese with an emoji
    assert (MEMORIES / RELEASE).read_bytes().startswith(b"\xef\xbb\xbfthread_id:")
    release = items[RELEASE]
    assert release.summary == "确认发布节奏：周四发布 🚀"
    assert "\r" not in release.body
    assert release.updated_at == iso_ms("2026-03-01T09:40:00Z")


def test_refs_answer_to_keys() -> None:
    items = by_key(codex.read(MEMORIES))
    names = {n.casefold() for i in items.values() for n in (i.key, *i.aliases)}
    for item in items.values():
        for ref in item.refs:
            assert ref.target.casefold() in names
        for match in REF_PATTERN.finditer(item.body):
            assert int(match.group(1)) < len(item.refs)


def test_skills_and_ad_hoc_notes() -> None:
    items = by_key(codex.read(MEMORIES))
    skill = items["skills/run-integration-tests/SKILL.md"]
    assert skill.summary == (
        "Skill run-integration-tests: Run the shop's integration suite with a fresh database"
        ' when the user says "run the tests"'
    )
    assert "make test-int" in skill.body
    note = items["extensions/ad_hoc/notes/präferenz-ä.md"]
    assert note.summary == "Keine Emojis in Commit-Nachrichten"
    assert note.body == "Ana möchte Commit-Nachrichten ohne Emojis. 🙅"


def test_older_bucket_layout() -> None:
    reading = codex.read(LEGACY)
    assert [p.origin for p in reading.problems] == ["0123456789abcdef/memory/raw_memories/0194.md"]
    items = by_key(reading)
    assert sorted(items) == [
        "0123456789abcdef/memory/consolidated.md#Build tips",
        "0123456789abcdef/memory/memory_summary.md#User Profile",
        "user/memory/memory_summary.md#User preferences",
    ]
    assert items["user/memory/memory_summary.md#User preferences"].type is NoteType.USER


def test_not_a_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        codex.read(tmp_path / "missing")
    with pytest.raises(InvalidInput):
        codex.read(MEMORIES / "MEMORY.md")


def test_reading_writes_nothing(tmp_path: Path) -> None:
    root = copy_fixture("codex/codex-home", tmp_path)
    before = tree(root)
    assert codex.read(root).items == codex.read(root).items
    assert tree(root) == before


def test_symlinks_outside_are_not_followed(tmp_path: Path) -> None:
    root = copy_fixture("codex/codex-home", tmp_path) / "memories"
    link, folder = add_outside_symlinks(root / "rollout_summaries", tmp_path)
    reading = codex.read(root)
    assert f"rollout_summaries/{link}" not in by_key(reading)
    assert reasons(reading)[f"rollout_summaries/{link}"].startswith("a symlink leading outside")
    assert reasons(reading)[f"rollout_summaries/{folder}"].startswith("a symlink leading")


def test_unreadable_and_huge_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_fixture("codex/codex-home", tmp_path) / "memories"
    deny_reads(monkeypatch, root / "memory_summary.md")
    monkeypatch.setattr(base, "MAX_SOURCE_BYTES", 1500)
    reading = codex.read(root)
    problems = reasons(reading)
    assert problems["memory_summary.md"] == "cannot be read: permission denied"
    assert problems["MEMORY.md"].endswith("over the 1500-byte limit; not read")
    assert FLAKY in by_key(reading)


def test_chmod_000(tmp_path: Path) -> None:
    root = copy_fixture("codex/codex-home", tmp_path) / "memories"
    make_unreadable(root / "MEMORY.md")
    assert reasons(codex.read(root))["MEMORY.md"] == "cannot be read: permission denied"


def test_an_unclosed_fence_never_swallows_the_task_groups_after_it(tmp_path: Path) -> None:
    """Every `# Task Group:` block is an item, whatever fence an earlier block left open."""
    (tmp_path / "MEMORY.md").write_text(
        "# Task Group: deploys (/srv/app)\n\nscope: releases\n\n## Task 1: ship\n\n"
        "- run:\n```bash\nmake deploy\n\n"  # the fence is never closed
        "# Task Group: database (/srv/app)\n\nscope: migrations\n\n"
        "## Reusable knowledge\n\n- `alembic upgrade head` first\n\n"
        "# Task Group: on-call (/srv/app)\n\nscope: paging\n",
        encoding="utf-8",
    )
    reading = codex.read(tmp_path)
    assert [i.summary for i in reading.items] == [
        "deploys (/srv/app)",
        "database (/srv/app)",
        "on-call (/srv/app)",
    ]
    assert "make deploy" in reading.items[0].body
    assert "alembic" in reading.items[1].body


def test_every_extension_s_resources_are_notes(tmp_path: Path) -> None:
    """Codex keeps an extension's durable resources under extensions/<name>/resources/
    (with instructions.md and manifest.json, which are not notes)."""
    ext = tmp_path / "extensions" / "team-wiki"
    (ext / "resources").mkdir(parents=True)
    (ext / "instructions.md").write_text("# Team wiki\n\nConsolidate these.\n", "utf-8")
    (ext / "manifest.json").write_text('{"version": 1, "resources": {}}\n', "utf-8")
    (ext / "resources" / "oncall.md").write_text(
        "# On-call rota\n\nAna covers weekends.\n", "utf-8"
    )
    (ext / "resources" / "deploys.md").write_text("Deploys go out on Tuesdays.\n", "utf-8")
    (tmp_path / "MEMORY.md").write_text("# Task Group: x\n\nscope: y\n", "utf-8")
    reading = codex.read(tmp_path)
    found = by_key(reading)
    assert set(found) == {
        "MEMORY.md#x",
        "extensions/team-wiki/resources/deploys.md",
        "extensions/team-wiki/resources/oncall.md",
    }
    oncall = found["extensions/team-wiki/resources/oncall.md"]
    assert oncall.summary == "On-call rota" and "Ana covers weekends." in oncall.body
    assert "team-wiki" in oncall.tags
    assert [p.origin for p in reading.problems] == ["extensions/team-wiki/instructions.md"]


def test_trace_summaries_are_session_recaps_and_every_other_file_says_why(
    tmp_path: Path,
) -> None:
    """Some Codex versions keep the per-session recaps in ``trace_summaries/``; a file no
    role reads is listed with its reason, never dropped in silence."""
    (tmp_path / "memory_summary.md").write_text("v1\n## General Tips\n\nUse uv.\n", "utf-8")
    traces = tmp_path / "trace_summaries"
    traces.mkdir()
    (traces / "2026-05-01T08-00-00-abc.md").write_text(
        "thread_id: abc\nupdated_at: 2026-05-01T08:00:00Z\n\n# Fixed the release script\n\n"
        "Ran make release twice.\n",
        "utf-8",
    )
    (tmp_path / "notes.md").write_text("stray\n", "utf-8")
    reading = codex.read(tmp_path)
    found = by_key(reading)
    trace = found["trace_summaries/2026-05-01T08-00-00-abc.md"]
    assert trace.summary == "Fixed the release script"
    assert trace.updated_at == iso_ms("2026-05-01T08:00:00Z")
    assert reasons(reading) == {"notes.md": "not a file Codex's memory writer makes; not imported"}

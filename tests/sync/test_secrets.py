"""A credential never leaves the machine through sync, nor reaches the server's storage (§2, §7.3).

A note edited on disk never met the store's write-time guard, so the pass guards every
upload itself: such a note is held with a reason naming the kind of secret and its
line, never the value. The server refuses a commit that carries one as well.
"""

from __future__ import annotations

import random
import string

import pytest

from memdir.core import Note, render_note
from memdir.errors import SecretRefused
from memdir.sync.client import SecretInCommit, SyncClient
from memdir.sync.protocol import Change, CommitRequest, ScopeRef, rev_of

from .conftest import Machine, World, report


def github_token(seed: str) -> str:
    """A GitHub-token-shaped value made at run time (no credential-like literal in the repo)."""
    rng = random.Random(seed)
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def on_disk(machine: Machine, note_id: str, old: str, new: str) -> None:
    """Edit a note file by hand (an editor), bypassing memdir's write path."""
    path = machine.directory("project") / f"{note_id}.md"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def server_bytes(world: World) -> bytes:
    """Every note text the server holds for this test's project, live or listed."""
    live = world.check_intact([world.key("project")])
    return b"".join(live.values())


def test_a_secret_edited_on_disk_is_held_and_never_reaches_the_server(
    world: World, two: tuple[Machine, Machine]
) -> None:
    a, b = two
    token = github_token("edited on disk")
    kept = a.note("Mirror setup for the release job", "line one\nline two")
    world.sync(a, b)
    before = world.manifest(world.key("project")).notes[kept].rev

    on_disk(a, kept, "line two", f"line two\nthe mirror pushes with {token}")
    fresh = a.directory("project") / "deploy-notes.md"
    fresh.write_bytes(render_note(Note(id="deploy-notes", summary="Deploy notes", body=token)))
    run = a.sync()
    held = report(run).held
    assert set(held) >= {kept, "deploy-notes"}, held
    for reason in (held[kept], held["deploy-notes"]):
        assert "GitHub token" in reason and "line" in reason
        assert token not in reason and token[4:14] not in reason
    assert kept not in report(run).pushed and "deploy-notes" not in report(run).pushed
    # The server still holds the version from before the edit, and nothing else.
    manifest = world.manifest(world.key("project"))
    assert manifest.notes[kept].rev == before and "deploy-notes" not in manifest.notes
    assert token.encode() not in server_bytes(world)
    b.sync()
    assert token.encode() not in b.files("project")[kept]
    assert not b.has("deploy-notes")

    # Once the secret is gone, both notes sync like any local edit.
    on_disk(a, kept, f"the mirror pushes with {token}", "the mirror pushes with $MIRROR_TOKEN")
    fresh.write_bytes(render_note(Note(id="deploy-notes", summary="Deploy notes", body="$DEPLOY")))
    run = a.sync()
    assert not report(run).held, report(run).held
    assert {kept, "deploy-notes"} <= set(report(run).pushed)
    world.settle(a, b)
    world.assert_converged(a, b)
    assert b"$MIRROR_TOKEN" in b.files("project")[kept]


@pytest.mark.parametrize("backend", ["dir"], indirect=True)
def test_the_server_refuses_a_commit_with_a_secret_and_the_client_says_so(
    world: World, two: tuple[Machine, Machine]
) -> None:
    # An older or different client that sends a secret anyway: the server stores nothing.
    a, _ = two
    a.note("Anything", "so the project has an id")
    token = github_token("sent anyway")
    text = render_note(Note(id="leaked", summary="Leaked", body=f"the key is {token}")).decode()
    change = Change(id="leaked", op="put", base=None, rev=rev_of(text.encode()), text=text)
    scope = ScopeRef(kind="project", project=world.project_id)
    with (
        SyncClient(world.server.url, world.token) as client,
        pytest.raises(SecretRefused) as info,
    ):
        client.commit(CommitRequest(scope=scope, changes=[change]))
    assert isinstance(info.value, SecretInCommit)
    assert info.value.ids == ("leaked",)
    message = str(info.value)
    assert "leaked" in message and "GitHub token" in message and token not in message
    assert world.manifest(world.key("project")).version == 0
    assert token.encode() not in server_bytes(world)

"""`memdir audit verify [--against FILE]` and `memdir audit head` through the real CLI."""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from memdir.errors import EXIT_INTEGRITY, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE

Invoke = Callable[..., Result]


def remember(cli: Invoke, summary: str) -> None:
    result = cli("remember", summary, "--body", f"body of {summary}")
    assert result.exit_code == EXIT_OK, result.output


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


def audit_dir(home: Path) -> Path:
    return home / "audit"


def rewrite_head(home: Path, **changes: Any) -> None:
    path = audit_dir(home) / "audit.head"
    head = {**json.loads(path.read_bytes()), **changes}
    head = {key: value for key, value in head.items() if value is not None}
    path.write_bytes(json.dumps(head, sort_keys=True, separators=(",", ":")).encode() + b"\n")


def test_head_prints_the_signed_head_as_text_and_json(cli: Invoke, home: Path) -> None:
    remember(cli, "First audited note")
    remember(cli, "Second audited note")
    result = cli("audit", "head", "--json")
    assert result.exit_code == EXIT_OK, result.output
    head = as_json(result)
    assert set(head) == {"seq", "hash", "ts", "key", "sig"}
    stored = json.loads((audit_dir(home) / "audit.head").read_bytes())
    assert head == stored

    text = cli("audit", "head")
    assert text.exit_code == EXIT_OK
    for value in (str(head["seq"]), head["hash"], head["key"], head["sig"], "UTC", "(id "):
        assert value in text.stdout


def test_head_before_anything_was_recorded_is_not_found(cli: Invoke) -> None:
    result = cli("audit", "head")
    assert result.exit_code == EXIT_NOT_FOUND
    assert "no head yet" in result.stderr


def test_head_refuses_to_print_a_head_that_does_not_verify(cli: Invoke, home: Path) -> None:
    remember(cli, "Audited note")
    rewrite_head(home, sig=None, key=None, ts=None)
    result = cli("audit", "head")
    assert result.exit_code == EXIT_INTEGRITY
    assert "unsigned" in result.stderr and "memdir audit verify" in result.stderr
    doc = as_json(cli("audit", "head", "--json"))
    assert doc["error"]["type"] == "IntegrityError"
    assert doc["error"]["exitCode"] == EXIT_INTEGRITY


def test_verify_reports_a_signed_head(cli: Invoke) -> None:
    remember(cli, "Audited note")
    result = cli("audit", "verify")
    assert result.exit_code == EXIT_OK, result.output
    assert "audit log intact" in result.stdout and "(signed)" in result.stdout
    report = as_json(cli("audit", "verify", "--json"))
    assert report["ok"] is True and report["signature"] == "signed"
    assert report["warnings"] == [] and len(report["key"]) == 64


def test_verify_fails_with_exit_7_on_a_rewritten_head(cli: Invoke, home: Path) -> None:
    remember(cli, "One")
    remember(cli, "Two")
    log = audit_dir(home) / "audit.jsonl"
    first = log.read_bytes().splitlines(keepends=True)[0]
    log.write_bytes(first)  # truncated to one entry ...
    entry = json.loads(first)
    rewrite_head(home, seq=entry["seq"], hash=entry["hash"], sig=None, key=None, ts=None)
    result = cli("audit", "verify")  # ... and the head rewritten to match
    assert result.exit_code == EXIT_INTEGRITY
    assert "damaged" in result.stdout and "head rewritten" in result.stdout
    report = as_json(cli("audit", "verify", "--json"))
    assert report["ok"] is False and report["signature"] == "invalid"


def test_verify_against_a_saved_head_detects_a_rollback(
    cli: Invoke, home: Path, tmp_path: Path
) -> None:
    remember(cli, "One")
    old = tmp_path / "old-audit"
    shutil.copytree(audit_dir(home), old)
    remember(cli, "Two")
    remember(cli, "Three")
    saved = tmp_path / "head.json"
    saved.write_text(cli("audit", "head", "--json").stdout)

    ok = cli("audit", "verify", "--against", str(saved))
    assert ok.exit_code == EXIT_OK, ok.output
    assert "consistent with the saved head" in ok.stdout

    for name in ("audit.jsonl", "audit.head"):  # back to an older, consistent copy
        shutil.copy2(old / name, audit_dir(home) / name)
    assert cli("audit", "verify").exit_code == EXIT_OK  # nothing to see without the saved head
    rolled = cli("audit", "verify", "--against", str(saved))
    assert rolled.exit_code == EXIT_INTEGRITY
    assert "rolled back" in rolled.stdout
    report = as_json(cli("audit", "verify", "--against", str(saved), "--json"))
    assert report["ok"] is False
    assert any("rolled back" in problem for problem in report["problems"])


def test_verify_against_detects_a_head_signed_by_another_key(
    cli: Invoke, home: Path, tmp_path: Path
) -> None:
    remember(cli, "One")
    saved = tmp_path / "head.json"
    saved.write_text(cli("audit", "head", "--json").stdout)
    key = audit_dir(home) / "audit.key"
    key.write_bytes(
        Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key.chmod(0o600)
    remember(cli, "Two")  # the head no longer verifies: written unsigned from now on
    result = cli("audit", "verify", "--against", str(saved))
    assert result.exit_code == EXIT_INTEGRITY
    assert "key file replaced" in result.stdout


def test_verify_against_a_missing_or_bad_file_is_a_usage_error(cli: Invoke, tmp_path: Path) -> None:
    remember(cli, "One")
    missing = cli("audit", "verify", "--against", str(tmp_path / "nope.json"))
    assert missing.exit_code == EXIT_USAGE
    bad = tmp_path / "bad.json"
    bad.write_text("this is not a head")
    result = cli("audit", "verify", "--against", str(bad))
    assert result.exit_code == EXIT_USAGE
    assert "saved head" in result.stderr


def test_a_legacy_unsigned_head_passes_with_a_warning(cli: Invoke, home: Path) -> None:
    remember(cli, "Written before heads were signed")
    rewrite_head(home, sig=None, key=None, ts=None)
    (audit_dir(home) / "audit.key").unlink()
    result = cli("audit", "verify")
    assert result.exit_code == EXIT_OK, result.output
    assert "(unsigned)" in result.stdout and "warning:" in result.stdout
    report = as_json(cli("audit", "verify", "--json"))
    assert report["ok"] is True and report["signature"] == "unsigned"
    assert report["warnings"] and report["key"] is None
    head = cli("audit", "head")
    assert head.exit_code == EXIT_OK and "unsigned" in head.stdout

    remember(cli, "Written after the upgrade")
    report = as_json(cli("audit", "verify", "--json"))
    assert report["signature"] == "signed" and report["warnings"] == []


def test_no_command_ever_prints_the_private_key(cli: Invoke, home: Path, tmp_path: Path) -> None:
    remember(cli, "One")
    key = audit_dir(home) / "audit.key"
    pem = key.read_bytes()
    private = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(private, Ed25519PrivateKey)
    raw = private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    forms = [raw.hex(), base64.b64encode(raw).decode()[:40], pem.splitlines()[1].decode()]
    saved = tmp_path / "head.json"
    saved.write_text(cli("audit", "head", "--json").stdout)
    outputs = [
        cli("audit", "head"),
        cli("audit", "head", "--json"),
        cli("audit", "verify"),
        cli("audit", "verify", "--json"),
        cli("audit", "verify", "--against", str(saved)),
    ]
    key.write_bytes(pem[:-30])  # damaged: the errors name the file, never its content
    outputs += [cli("audit", "verify"), cli("audit", "head"), cli("remember", "Two", "--body", "x")]
    assert outputs[-1].exit_code == EXIT_INTEGRITY
    for result in outputs:
        for form in forms:
            assert form not in result.stdout and form not in result.stderr

"""Tests for `guard/vendors.py`: vendor token formats recognised by their prefix and shape."""

from __future__ import annotations

import pytest

from memdir.guard import scan_text
from memdir.guard.hit import PRIO_VENDOR, Hit
from memdir.guard.vendors import vendor_hits

from .corpus import AWS_ID, GH_PAT, GL_PAT, STRIPE_LIVE


def test_provider_fixture_style_tokens_are_refused() -> None:
    # Other suites build fixtures like "ghp_" + "A1b2" * 9; repetitive bodies still count.
    assert scan_text("ghp_" + "A1b2" * 9)[0].kind == "GitHub token"
    assert scan_text("sk-proj-" + "Ab3d" * 12)[0].kind == "OpenAI API key"
    assert scan_text("AKIA" + "ABCD2345" * 2)[0].kind == "AWS access key id"


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        (GH_PAT, "GitHub token"),
        (AWS_ID, "AWS access key id"),
        (STRIPE_LIVE, "Stripe secret key"),
        (GL_PAT, "GitLab token"),
    ],
)
def test_vendor_hits_span_the_whole_token(token: str, kind: str) -> None:
    text = f"see {token} now"
    assert list(vendor_hits(text)) == [Hit(4, 4 + len(token), kind, PRIO_VENDOR)]


@pytest.mark.parametrize("text", ["ghp_example", "sk_live_" + "x" * 24, "AKIA-not-a-key", ""])
def test_marked_or_malformed_tokens_are_not_vendor_hits(text: str) -> None:
    assert list(vendor_hits(text)) == []

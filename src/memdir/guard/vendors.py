"""Vendor token formats: credentials recognisable by their own prefix and shape."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from .hit import PRIO_VENDOR, Hit
from .values import class_count, looks_random, shannon_entropy

__all__ = ["vendor_hits"]

_MARKERS_RE = re.compile(
    r"example|dummy|fake|sample|placeholder|redacted|your[_-]|x{5,}|\*{3,}|\.\.\.|<|>|\$\{|\{\{",
    re.IGNORECASE,
)


def _not_marked(value: str) -> bool:
    # Prefix-anchored formats are trusted even when the body is repetitive (test fixtures
    # such as "ghp_" + "A1b2" * 9 must still be refused); only explicit stand-ins pass.
    body = value[4:] if len(value) > 8 else value
    return not _MARKERS_RE.search(value) and len(set(body)) > 2


def _mixed(value: str) -> bool:
    return _not_marked(value) and class_count(value) >= 2


def _mixed3(value: str) -> bool:
    return _not_marked(value) and class_count(value) >= 3 and shannon_entropy(value) >= 3.0


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    regex: re.Pattern[str]
    check: Callable[[str], bool]
    group: int
    lead: int  # characters of the token that a lookbehind checked before the match start
    back: tuple[frozenset[str], int, int] | None  # chars, min, max of a head read backwards


def _r(
    kind: str,
    pattern: str,
    check: Callable[[str], bool] = _not_marked,
    *,
    group: int = 0,
    lead: int = 0,
    back: tuple[str, int, int] | None = None,
) -> _Rule:
    head = None if back is None else (frozenset(back[0]), back[1], back[2])
    return _Rule(kind, re.compile(pattern), check, group, lead, head)


_DIGITS = "0123456789"
_HEX = "0123456789abcdef"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" + _DIGITS


def _slack(value: str) -> bool:
    # Real Slack tokens embed numeric team/user ids; "xoxb-your-bot-token" does not.
    return _not_marked(value) and any(ch.isdigit() for ch in value)


def _discord(value: str) -> bool:
    return value[:1] in ("M", "N", "O") and _mixed3(value)


_B62 = "[A-Za-z0-9]"
_URLSAFE = "[A-Za-z0-9_-]"
_END = r"(?![A-Za-z0-9_-])"

# Every rule starts with a literal so the regex engine can skip ahead quickly (a leading
# character class or lookbehind makes it try every position, ten times slower).  The left
# word boundary is checked in Python, and formats whose distinctive literal sits mid-token
# (":AA", "Q~", ".atlasv1.", "-us") match from that literal and read the head backwards.
_RULES: tuple[_Rule, ...] = (
    _r("AWS access key id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    _r("Alibaba Cloud access key id", r"LTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9])", _mixed),
    _r("GitHub token", rf"gh[pousr]_{_B62}{{36,255}}(?![A-Za-z0-9_])"),
    _r("GitHub token", r"github_pat_[A-Za-z0-9_]{60,255}(?![A-Za-z0-9_])"),
    _r(
        "GitLab token",
        rf"(?:glpat|gldt|glrt|glptt|glft|glimt|glagent|glsoat|glcbt|gloas)-{_URLSAFE}{{20,}}{_END}",
    ),
    _r("GitLab runner token", rf"GR1348941{_URLSAFE}{{20,}}{_END}"),
    _r("Bitbucket app password", r"ATBB[A-Za-z0-9_=.-]{28,}(?![A-Za-z0-9_=.-])"),
    _r("Atlassian API token", r"AT[AC]TT3[A-Za-z0-9_=.-]{40,}(?![A-Za-z0-9_=.-])"),
    _r("Slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}(?![A-Za-z0-9_-])", _slack),
    _r("Slack token", r"xoxe\.xox[bp]-[A-Za-z0-9-]{10,}(?![A-Za-z0-9_-])", _slack),
    _r("Slack app token", r"xapp-\d-[A-Za-z0-9-]{10,}(?![A-Za-z0-9_-])"),
    _r(
        "Slack webhook URL",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}",
    ),
    _r(
        "Discord webhook URL",
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{5,}/[A-Za-z0-9_-]{30,}",
    ),
    _r(
        "Microsoft Teams webhook URL",
        r"https://[A-Za-z0-9.-]{1,64}\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{40,}",
    ),
    _r(
        "Discord bot token",
        r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])",
        _discord,
        back=(_ALNUM + "_-", 24, 28),
    ),
    _r("Telegram bot token", rf":AA{_URLSAFE}{{33}}{_END}", back=(_DIGITS, 8, 10)),
    _r(
        "Telegram bot token",
        rf"api\.telegram\.org/(?:file/)?bot([0-9]{{8,10}}:AA{_URLSAFE}{{33}}){_END}",
        group=1,
    ),
    _r("Stripe secret key", rf"sk_(?:live|test)_{_B62}{{16,}}(?![A-Za-z0-9])"),
    _r("Stripe restricted key", rf"rk_(?:live|test)_{_B62}{{16,}}(?![A-Za-z0-9])"),
    _r("Stripe webhook secret", r"whsec_[A-Za-z0-9+/=]{24,}"),
    _r("Square access token", rf"EAAA{_URLSAFE}{{56,}}{_END}"),
    _r("Square access token", rf"sq0atp-{_URLSAFE}{{22,}}{_END}"),
    _r("Square OAuth secret", rf"sq0csp-{_URLSAFE}{{40,}}{_END}"),
    _r(
        "PayPal/Braintree access token",
        r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
    ),
    _r("Anthropic API key", rf"sk-ant-{_URLSAFE}{{32,}}{_END}"),
    _r("OpenAI API key", rf"sk-(?:proj|svcacct|admin)-{_URLSAFE}{{40,}}{_END}"),
    _r("OpenAI API key", rf"sk-{_B62}{{32,}}{_END}", _mixed),
    _r("Google API key", rf"AIza{_URLSAFE}{{35}}{_END}"),
    _r("Google OAuth client secret", rf"GOCSPX-{_URLSAFE}{{24,}}{_END}"),
    _r("Google OAuth access token", rf"ya29\.{_URLSAFE}{{30,}}{_END}", _mixed),
    _r("Hugging Face token", rf"hf_{_B62}{{30,}}(?![A-Za-z0-9])", _mixed),
    _r("Hugging Face token", rf"api_org_{_B62}{{30,}}(?![A-Za-z0-9])", _mixed),
    _r("Groq API key", rf"gsk_{_B62}{{40,}}(?![A-Za-z0-9])"),
    _r("Replicate API token", rf"r8_{_B62}{{30,}}(?![A-Za-z0-9])"),
    _r("xAI API key", rf"xai-{_B62}{{60,}}(?![A-Za-z0-9])"),
    _r("Perplexity API key", rf"pplx-{_B62}{{40,}}(?![A-Za-z0-9])"),
    _r("npm token", rf"npm_{_B62}{{36}}(?![A-Za-z0-9])"),
    _r("PyPI token", rf"pypi-AgE{_URLSAFE}{{50,}}{_END}"),
    _r("RubyGems API key", r"rubygems_[a-f0-9]{48}(?![A-Za-z0-9])"),
    _r("NuGet API key", r"oy2[a-z0-9]{43}(?![A-Za-z0-9])", _mixed),
    _r("Docker Hub token", rf"dckr_pat_{_URLSAFE}{{20,}}{_END}"),
    _r("SendGrid API key", rf"SG\.{_URLSAFE}{{22}}\.{_URLSAFE}{{43}}{_END}"),
    _r("Twilio API key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", _mixed),
    _r("Twilio credential", r"AC[0-9a-f]{32}:[0-9a-f]{32}(?![A-Za-z0-9])"),
    _r("Mailgun API key", rf"key-{_B62}{{32}}(?![A-Za-z0-9])", _mixed),
    _r("Mailchimp API key", r"-us[0-9]{1,2}(?![A-Za-z0-9])", back=(_HEX, 32, 32)),
    _r("Shopify access token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])"),
    _r("DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9])"),
    _r("Heroku API key", rf"HRKU-{_URLSAFE}{{30,}}{_END}"),
    _r("HashiCorp Vault token", rf"hv[sbr]\.{_URLSAFE}{{24,}}{_END}"),
    _r("Doppler token", rf"dp\.(?:pt|st|sa|ct|scim|audit)\.{_B62}{{40,44}}(?![A-Za-z0-9])"),
    _r("Linear API key", rf"lin_(?:api|oauth)_{_B62}{{40}}(?![A-Za-z0-9])"),
    _r("Notion token", rf"ntn_{_B62}{{40,}}(?![A-Za-z0-9])", _mixed),
    _r("Notion token", rf"secret_{_B62}{{43}}(?![A-Za-z0-9])", _mixed),
    _r("Postman API key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}(?![A-Za-z0-9])"),
    _r("Sentry token", r"sntr[ysu]_[A-Za-z0-9+/=_]{40,}"),
    _r("Databricks token", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", _mixed),
    _r("Grafana token", r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})"),
    _r("New Relic API key", r"NRAK-[A-Z0-9]{27}(?![A-Za-z0-9])"),
    _r("Pulumi access token", r"pul-[a-f0-9]{40}(?![A-Za-z0-9])"),
    _r(
        "Terraform Cloud token",
        rf"\.atlasv1\.{_URLSAFE}{{60,}}{_END}",
        back=(_ALNUM, 14, 14),
    ),
    _r("age secret key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}(?![A-Za-z0-9])"),
    _r("Supabase access token", r"sbp_[a-f0-9]{40}(?![A-Za-z0-9])"),
    _r("PlanetScale token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,}"),
    _r("Tailscale key", rf"tskey-[a-z]+-{_B62}{{6,}}-{_B62}{{16,}}(?![A-Za-z0-9])"),
    _r("Fly.io token", rf"fo1_{_URLSAFE}{{40,}}{_END}"),
    _r("Figma token", rf"figd_{_URLSAFE}{{40,}}{_END}"),
    _r("Mapbox secret token", rf"sk\.eyJ{_URLSAFE}{{50,}}\.{_URLSAFE}{{20,}}{_END}"),
    _r(
        "Azure client secret",
        r"Q~(?<=[A-Za-z0-9_~.-]{3}\dQ~)[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
        _mixed3,
        lead=4,
    ),
    _r(
        "Azure storage account key",
        r"AccountKey=([A-Za-z0-9+/]{40,}={0,2})",
        group=1,
    ),
    _r("Azure shared access key", r"SharedAccessKey=([A-Za-z0-9+/]{30,}={0,2})", group=1),
    _r("Azure SAS token", r"\?sig=([A-Za-z0-9%+/]{30,}(?:%3D|=)*)", group=1),
    _r("Azure SAS token", r"&sig=([A-Za-z0-9%+/]{30,}(?:%3D|=)*)", group=1),
)

_AWS_SECRET_RE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_WINDOW = 400


def _aws_secret_near(text: str, start: int, end: int) -> Iterator[Hit]:
    # An access key id almost always travels with its secret (CSV exports, credentials
    # files, prose); a 40-char base64 value nearby is that secret even without a key name.
    lo = max(0, start - _AWS_WINDOW)
    hi = min(len(text), end + _AWS_WINDOW)
    for m in _AWS_SECRET_RE.finditer(text, lo, hi):
        value = m.group()
        is_hex = all(c in "0123456789abcdefABCDEF" for c in value)
        if is_hex or not _not_marked(value) or not looks_random(value):
            continue
        yield Hit(m.start(), m.end(), "AWS secret access key", PRIO_VENDOR)


def _joins_word(ch: str) -> bool:
    return ch.isalnum() or ch in "_~"


def vendor_hits(text: str) -> Iterator[Hit]:
    """Yield every vendor-format token in the text."""
    for rule in _RULES:
        for m in rule.regex.finditer(text):
            start, end = m.start(rule.group) - rule.lead, m.end(rule.group)
            if rule.back is not None:
                chars, least, most = rule.back
                head = start
                while head > 0 and start - head < most and text[head - 1] in chars:
                    head -= 1
                if start - head < least:
                    continue
                start = head
            if rule.group == 0 and start > 0 and _joins_word(text[start - 1]):
                continue
            if not rule.check(text[start:end]):
                continue
            yield Hit(start, end, rule.kind, PRIO_VENDOR)
            if rule.kind == "AWS access key id":
                yield from _aws_secret_near(text, start, end)

"""Deciding whether a key name (or prose noun) is secret-sounding, and how to label it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["KeyClass", "classify_key"]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


_SPLIT_RE = re.compile(r"[_.\-\s/]+")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

_PASSWORD_WORDS = _set(
    "password passwd passwort kennwort passphrase passcode pwd pass pw 密码 密碼 口令"
)
# Password words of other languages, typed without accents in keys ("SENHA_BANCO",
# "db_wachtwoord", "haslo", "sifre"); Romance and Slavic keys put the qualifier after them.
_FOREIGN_PASSWORD_WORDS = _set(
    "senha contrasena contrasenya wachtwoord haslo sifre parola parol motdepasse mdp"
)
_PASSWORD_WORDS |= _FOREIGN_PASSWORD_WORDS
# "Key" in other languages, and the words that make such a key secret, in either order:
# "chiave_api", "clave_secreta", "api_anahtari", "geheimer_schluessel", "klucz_tajny".
_FOREIGN_KEY_WORDS = _set(
    """
    chiave chiavi clave claves cle clef chave chaves sleutel klucz anahtar anahtari anahtarı
    schluessel schlüssel ключ
    """
)
_FOREIGN_KEY_QUALIFIERS = _set(
    """
    api segreta segreto secreta secreto secrete secrète secret privata privada privee privée
    prywatny tajny gizli geheim geheime geheimer geheimes accesso acceso acces accès acesso
    dostepu dostępu erisim erişim toegang zugang
    """
)
# Russian keys in snake case ("пароль_бд", "ключ_api"): the word comes first.
_CYRILLIC_HEADS = {"пароль": "password", "ключ": "key", "токен": "token", "секрет": "secret"}
# Words after a head-first password word that make the key describe it, not hold it.
_DESCRIBES = _set(
    "file path hash hashed policy min max length len hint url uri reset regex rule rules"
    " expiry expires expired enabled required type format"
)
_WEAK_PASSWORD_WORDS = _set("pass pwd pw")
# Session identifiers in cookies and config: whoever holds one is logged in.
_SESSION_WORDS = _set("session sessionid sessid jsessionid phpsessid aspsessionid")
_PASSWORD_SUFFIXES = ("password", "passwd", "passwort", "kennwort", "passphrase")
_TOKEN_WORDS = _set("token bearer 令牌")
_SECRET_WORDS = _set("secret")
_CREDENTIAL_WORDS = _set("credential credentials creds auth")
_KEY_WORDS = _set("key schlüssel schluessel 密钥 密鑰 秘钥 私钥")
_CJK_KEYS = {
    "密钥": "secret key",
    "密鑰": "secret key",
    "秘钥": "secret key",
    "私钥": "private key",
}

# "key" alone is everywhere ("key: value", "the key insight"); only a qualified key is secret.
_KEY_QUALIFIERS = _set("""
    api access secret private auth master encryption signing sign client account storage app
    application consumer subscription shared admin session hmac service license webhook jwt
    bot project org developer dev live prod production test sas primary secondary x
    """)
_TOKEN_QUALIFIERS = _set("""
    access refresh auth bot id api session bearer personal oauth app deploy registration runner
    service user admin webhook csrf xsrf
    """)
_NEVER_SECRET_QUALIFIERS = _set("public publishable pub ssh gpg pgp host deploy")

# Pagination cursors and NLP special tokens are "tokens" that protect nothing.
_TOKEN_NON_SECRET = _set("""
    next page pagination continuation sync cursor start end request idempotency cancellation
    eos bos pad unk mask sep cls special unknown max min num total input output prompt
    completion context
    """)
_PASSWORD_NON_SECRET = _set(
    "hash hashed encrypted enc bcrypt crypt argon2 scrypt pbkdf2 salted min max policy"
)

# Trailing words that keep the meaning of the secret word before them (SECRET_KEY_BASE).
_SUFFIXES = _set(
    "value b64 base64 hex raw str base string plain plaintext prod production dev staging live"
    " test local"
)

_PROVIDERS = {
    "aws": "AWS",
    "azure": "Azure",
    "gcp": "GCP",
    "google": "Google",
    "gemini": "Gemini",
    "github": "GitHub",
    "gh": "GitHub",
    "gitlab": "GitLab",
    "bitbucket": "Bitbucket",
    "slack": "Slack",
    "discord": "Discord",
    "telegram": "Telegram",
    "stripe": "Stripe",
    "square": "Square",
    "paypal": "PayPal",
    "braintree": "Braintree",
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "claude": "Anthropic",
    "cohere": "Cohere",
    "mistral": "Mistral",
    "huggingface": "Hugging Face",
    "hf": "Hugging Face",
    "groq": "Groq",
    "replicate": "Replicate",
    "npm": "npm",
    "pypi": "PyPI",
    "twine": "PyPI",
    "rubygems": "RubyGems",
    "nuget": "NuGet",
    "docker": "Docker",
    "dockerhub": "Docker",
    "sendgrid": "SendGrid",
    "twilio": "Twilio",
    "mailgun": "Mailgun",
    "mailchimp": "Mailchimp",
    "shopify": "Shopify",
    "atlassian": "Atlassian",
    "jira": "Jira",
    "confluence": "Confluence",
    "digitalocean": "DigitalOcean",
    "heroku": "Heroku",
    "vault": "Vault",
    "doppler": "Doppler",
    "cloudflare": "Cloudflare",
    "datadog": "Datadog",
    "dd": "Datadog",
    "okta": "Okta",
    "auth0": "Auth0",
    "sentry": "Sentry",
    "algolia": "Algolia",
    "contentful": "Contentful",
    "firebase": "Firebase",
    "supabase": "Supabase",
    "vercel": "Vercel",
    "netlify": "Netlify",
    "pinecone": "Pinecone",
    "wandb": "Weights & Biases",
    "together": "Together",
    "deepseek": "DeepSeek",
    "perplexity": "Perplexity",
    "elevenlabs": "ElevenLabs",
    "linear": "Linear",
    "notion": "Notion",
    "airtable": "Airtable",
    "figma": "Figma",
    "travis": "Travis CI",
    "circleci": "CircleCI",
    "jenkins": "Jenkins",
    "npmrc": "npm",
    "mapbox": "Mapbox",
    "segment": "Segment",
    "mixpanel": "Mixpanel",
    "pagerduty": "PagerDuty",
    "newrelic": "New Relic",
    "snyk": "Snyk",
    "sonar": "SonarQube",
    "codecov": "Codecov",
}

_NOUN_LABELS = {"api": "API", "jwt": "JWT", "hmac": "HMAC", "sas": "SAS", "x": ""}


@dataclass(frozen=True, slots=True)
class KeyClass:
    """How a secret-sounding name is treated: password rules or token rules, and its label."""

    is_password: bool
    kind: str
    phrase: bool = False
    strong: bool = True  # an unambiguous noun, unlike "pass"/"pwd"/"pw" (verbs, commands)
    # Secrets people make up ("JWT_SECRET=my-jwt-s3cret-2024") need not look random; tokens
    # and API keys are machine-made, so for them randomness is the test.
    chosen: bool = False


def _words(name: str) -> list[str]:
    parts: list[str] = []
    for chunk in _SPLIT_RE.split(name):
        parts.extend(p.lower() for p in _CAMEL_RE.split(chunk) if p)
    return parts


def _provider(words: list[str]) -> str | None:
    for w in words:
        if w in _PROVIDERS:
            return _PROVIDERS[w]
        for key, label in _PROVIDERS.items():
            if len(key) >= 5 and w.startswith(key):
                return label
    return None


def _noun(qualifier: str | None, base: str) -> str:
    if qualifier is None or qualifier in _PROVIDERS:
        return base
    label = _NOUN_LABELS.get(qualifier, qualifier)
    return f"{label} {base}".strip()


def _categorise(last: str, prev: str | None) -> tuple[bool, str] | None:
    if last in _PASSWORD_WORDS or last.endswith(_PASSWORD_SUFFIXES):
        if prev in _PASSWORD_NON_SECRET:
            return None
        base = "passphrase" if last.endswith("passphrase") else "password"
        return True, _noun(prev if prev in _KEY_QUALIFIERS else None, base)
    if last in _TOKEN_WORDS or (last.endswith("token") and len(last) > 5):
        if prev in _TOKEN_NON_SECRET:
            return None
        qualifier = last[:-5] if last.endswith("token") and len(last) > 5 else prev
        return False, _noun(qualifier if qualifier in _TOKEN_QUALIFIERS else None, "token")
    if last in _SECRET_WORDS or (last.endswith("secret") and len(last) > 6):
        qualifier = last[:-6] if len(last) > 6 else prev
        return False, _noun(qualifier if qualifier in _KEY_QUALIFIERS else None, "secret")
    if last in _CREDENTIAL_WORDS:
        return False, "credential"
    if last in _SESSION_WORDS or (last == "id" and prev == "session"):
        return False, "session id"
    if last in _CJK_KEYS:
        return False, _CJK_KEYS[last]
    if last in _KEY_WORDS:
        if prev in _NEVER_SECRET_QUALIFIERS or not (prev in _KEY_QUALIFIERS or prev in _PROVIDERS):
            return None
        return False, _noun(prev, "key")
    for suffix in ("key", "schlüssel", "schluessel"):
        if last.endswith(suffix) and len(last) > len(suffix):
            head = last[: -len(suffix)]
            if head in _KEY_QUALIFIERS or head == "zugangs":
                return False, _noun(head if head != "zugangs" else "access", "key")
    return None


def _foreign_key(words: list[str]) -> tuple[bool, str] | None:
    """A snake-case key in another language: a key word with a secret-making qualifier."""
    if any(w in _DESCRIBES for w in words):
        return None
    head = _CYRILLIC_HEADS.get(words[0])
    if head is not None:
        return head == "password", head
    keys = [w for w in words if w in _FOREIGN_KEY_WORDS]
    if not keys:
        return None
    others = [w for w in words if w not in _FOREIGN_KEY_WORDS]
    if others and all(w in _FOREIGN_KEY_QUALIFIERS or w in _KEY_QUALIFIERS for w in others):
        return False, "API key" if "api" in others else "secret key"
    return None


@lru_cache(maxsize=4096)
def classify_key(name: str) -> KeyClass | None:
    """Return how to judge a value assigned to `name`, or None if the name is not secret."""
    words = _words(name)
    while len(words) > 1 and (words[-1] in _SUFFIXES or words[-1].isdigit()):
        words.pop()
    if not words:
        return None
    last = words[-1]
    prev = words[-2] if len(words) > 1 else None
    found = _categorise(last, prev)
    if (
        found is None
        and words[0] in _FOREIGN_PASSWORD_WORDS
        and len(words) <= 3
        and not any(w in _DESCRIBES for w in words[1:])
    ):
        found = True, "password"  # "senha_banco", "haslo_admin"
    if found is None and 2 <= len(words) <= 3:
        found = _foreign_key(words)
    if found is None:
        return None
    is_password, noun = found
    phrase = noun.endswith("passphrase")
    strong = not (is_password and last in _WEAK_PASSWORD_WORDS)
    chosen = noun.endswith("secret")
    provider = _provider(words)
    if provider == "AWS" and "secret" in words:
        kind = "AWS secret access key"
    elif provider is not None:
        kind = f"{provider} {noun}"
    else:
        kind = f"{noun} assignment"
    return KeyClass(is_password, kind, phrase, strong, chosen)

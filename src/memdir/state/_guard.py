"""The no-credential guard of every state write: secret-sounding key names and secret values.

Key names are compared folded (NFKC, case-folded, separators and camel case ignored) against
words for passwords, tokens, secrets, API and private keys, credentials and authentication
in several languages; values go through the credential guard (`memdir.guard`). A refusal
names the key or the kind of secret found, never the value.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from memdir.errors import SecretRefused
from memdir.guard import scan_fields

__all__ = ["check_key", "check_write", "key_is_secret"]


def _split(words: str) -> tuple[str, ...]:
    """Words from a whitespace-separated string; keeps long vocabularies readable."""
    return tuple(words.split())


# Anywhere in the key with separators removed ("db_pass_word" → "dbpassword").
_STEMS = _split(
    "password passwd passwort kennwort passphrase passcode secret apikey privatekey"
    " secretkey accesskey signingkey encryptionkey masterkey clientsecret credential"
    " authtoken authkey bearer motdepasse contrasena contrasenya wachtwoord senha"
    " haslo hasło şifre sifre parola пароль секрет токен 密码 密碼 口令 令牌"
    " 密钥 密鑰 秘钥 私钥 パスワード 暗証番号 トークン 秘密鍵 비밀번호 암호 토큰 كلمةالمرور"
    " סיסמה पासवर्ड geheimnis segreto secreto"
)
# Whole words only: short words that sit inside ordinary ones ("author", "tokens" counts).
_WORDS = frozenset(
    _split("pw pwd pass passwd auth authn authz token jwt creds cookie cookies sid sessid")
)
# Anywhere too, once separators are gone: a session's id or key is its credential.
_SESSION_STEMS = _split("sessionid sessid sessionkey sessiontoken sessioncookie sessionsecret")
# Latin look-alikes from Cyrillic and Greek ("pаssword" with a Cyrillic а): a key is
# checked as written and with these folded, so Cyrillic words keep matching their stems.
_CONFUSABLES = str.maketrans(
    "аеорсуххіјѕԁԛԝһӏкмтвнαοριεκνυτχ",
    "aeopcyxxijsdqwhlkmtbhaopieknutx",
)
_WORD_PREFIXES = ("authoriz", "authoris", "authentic", "credential")
_SPLIT_RE = re.compile(r"[\s_\-./:\\]+")
_CAMEL_RE = re.compile(
    r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[^\W\d])(?=\d)|(?<=\d)(?=[^\W\d])"
)


def _words(key: str) -> list[str]:
    text = unicodedata.normalize("NFKC", key)
    parts = [p for chunk in _SPLIT_RE.split(text) for p in _CAMEL_RE.split(chunk)]
    return [p.casefold() for p in parts if p]


def _names_secret(words: list[str]) -> bool:
    joined = "".join(words)
    # Accents dropped too, so "contraseña" meets the stem typed as "contrasena".
    bare = "".join(c for c in unicodedata.normalize("NFKD", joined) if not unicodedata.combining(c))
    stems = (*_STEMS, *_SESSION_STEMS)
    if any(stem in joined or stem in bare for stem in stems):
        return True
    return any(w in _WORDS or w.startswith(_WORD_PREFIXES) or w.endswith("token") for w in words)


def key_is_secret(key: str) -> bool:
    """True when `key` names a credential (a password, a token, an API key, a session id,
    …), also spelled with Cyrillic or Greek look-alike letters."""
    words = _words(key)
    if _names_secret(words):
        return True
    folded = [w.translate(_CONFUSABLES) for w in words]
    return folded != words and _names_secret(folded)


def check_key(key: str, what: str = "key") -> None:
    """Refuse a key name that is a credential (the full guard: shapes and values, after its
    Unicode folding — never echoed) or names one (the message names the word)."""
    if not key.strip():
        from memdir.errors import InvalidInput

        raise InvalidInput(f"a {what} name cannot be empty")
    found = scan_fields({"name": key})
    if found:
        kind = found[0][1].kind
        raise SecretRefused(
            f"refused: the {what} name holds what looks like a credential ({kind}); the state "
            "store never holds credentials, not even as a name (nothing was written)",
            ((kind, f"{what} name", 1),),
        )
    if key_is_secret(key):
        raise SecretRefused(
            f"refused: the {what} {key!r} names a credential; the state store never holds "
            "credentials (keep the name of an environment variable instead, under another key)",
            (("secret-named key", f"{what} name", 1),),
        )


def check_write(values: Mapping[str, str], fields: Mapping[str, str] | None = None) -> None:
    """Refuse a write whose field names or values look like credentials.

    `values` are the row's own columns (title, notes, …); `fields` the caller's named
    fields, whose names are checked too. Findings name the field and the kind, never a value.
    """
    named: dict[str, str] = dict(values)
    for key, value in (fields or {}).items():
        check_key(key, "field")
        named[f"field {key}"] = value
    found = scan_fields(named)
    if found:
        from memdir.guard import describe

        raise SecretRefused(describe(found), tuple((f.kind, name, f.line) for name, f in found))

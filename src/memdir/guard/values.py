"""Judging a candidate value: placeholder or reference, random-looking, or password-like."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

__all__ = [
    "access_code",
    "class_count",
    "diceware_phrase",
    "is_placeholder",
    "is_stand_in",
    "looks_random",
    "numeric_password",
    "password_like",
    "phrase_at",
    "phrase_words",
    "pin_like",
    "plausible_password",
    "prose_password",
    "prose_phrase",
    "recovery_code",
    "shannon_entropy",
    "sigil_password",
    "strong_password",
    "switch_rate",
    "token_like",
    "wifi_key",
]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


# Markers that documentation and templates put into fake credentials; the spec says a value
# carrying any of them is an example, not a secret.
_MARKER_RE = re.compile(
    r"example|dummy|fake|sample|placeholder|redacted|change[_-]?me|x{5,}|\*{3,}|•{3,}|\.\.\.|…"
    r"|your[_-]?(?:own[_-]?)?(?:api|secret|token|pass|key|access|client|auth|app|account|bot)"
    r"|[_-]here$|^<.*>$|^\[.*\]$",
    re.IGNORECASE,
)

# Templating and secret-manager references: the value names where the secret lives.
_REFERENCE_RE = re.compile(
    r"\$\{|\{\{|\}\}|%\(|\{\d*\}|os\.environ|getenv|process\.env|import\.meta\.env|ENV\["
    r"|env\(|secrets\.|op://|vault:|ssm:|arn:aws:|keyvault|secretmanager|secretsmanager",
    re.IGNORECASE,
)

# Leading characters that make a value a variable, YAML tag/alias, shell substitution,
# reST field (":py:data:"), parenthetical remark or nested structure rather than a literal.
_SIGILS = frozenset("$%!&*@:([{")

# A dotted identifier followed by a call or subscript is code, not a literal.
_CODE_RE = re.compile(r"[A-Za-z_][\w.]*[(\[]")

_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z_.\-]*")
# obj.attr, module.CONSTANT: an attribute access, not a literal.
_DOTTED_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# some_variable_name: code passing a variable along ("password = index_info").
_SNAKE_RE = re.compile(r"_?[a-z]+(?:_[a-z]+)+")
_WORDISH_CASE_RE = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+")
# "hard-coded", "E-Mail-basiert": a compound word where prose expects a password.
_HYPHENATED_RE = re.compile(r"[A-Za-zÄÖÜäöüß]+(?:-[A-Za-zÄÖÜäöüß]+)+")
# SecretStr, HiddenText: a type annotation, not a value.
_CAMEL_TYPE_RE = re.compile(r"(?:[A-Z][a-z]+){2,}")
_SECRETISH_RE = re.compile(r"pass|pwd|secret|token|key|cred|auth", re.IGNORECASE)

_WORD_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

# Words that fill template values ("your-api-key-here", "myPassword", "changeme"); a value
# made only of these (and no digits) is a stand-in rather than a credential.
_VOCAB = _set("""
    password passwd pass pwd pw passwort kennwort secret secrets token tokens key keys api apikey
    access private auth my your the a an here goes value string insert replace enter put paste
    placeholder example sample dummy fake test testing changeme change me redacted hidden masked
    foo bar baz qux abc xyz xxx user username db database admin root guest new old default
    client app none null nil todo tbd fixme this that some any real actual
    """)

# Values that describe a password field rather than being one (schemas, forms, type hints).
STOPWORDS = _set("""
    true false yes no on off null none nil undefined required optional string str text int
    integer bool boolean number varchar char bytes hidden masked empty unset notset na n/a tbd
    todo same default prompt ask env environment see below above set stored reset changed
    expired invalid incorrect wrong missing needed necessary correct secure strong weak long
    short
    """)

# The 341 letter pairs that make up 99% of adjacent-letter pairs in English identifiers,
# comments and docstrings (measured on the CPython standard library).
_COMMON_PAIRS = _set("""
    ab ac ad af ag ai ak al am an ap ar as at au av aw ax ay ba bc bd be bi bj bl bo bp br bs bu
    by ca cc cd ce ch ci ck cl cm co cp cr cs ct cu cy da db dd de df di dl do dr ds dt du dy ea
    eb ec ed ee ef eg ei ek el em en eo ep eq er es et eu ev ew ex ey fa fd fe ff fi fl fn fo fr
    fs ft fu fy ga ge gg gh gi gl gm gn go gr gs gt gu ha he hi hl hm ho hr hs ht hu ia ib ic id
    ie if ig ik il im in io ip ir is it iv ix iz je jo ju ka ke kg ki kl kn ks ku kw la lb ld le
    lf lg li ll ln lo lp lr ls lt lu ly ma mb md me mi ml mm mn mo mp ms mt mu na nc nd ne nf ng
    ni nk nl nm nn no np ns nt nu nv ny oa ob oc od oe of og oi ok ol om on oo op or os ot ou ov
    ow ox pa pd pe ph pi pk pl po pp pr ps pt pu py qu ra rb rc rd re rf rg ri rk rl rm rn ro rp
    rr rs rt ru rv rw ry sa sc se sf sg sh si sk sl sm sn so sp sr ss st su sw sy ta tc td te tf
    th ti tl tm to tp tr ts tt tu tw ty ua ub uc ud ue uf ug ui ul um un uo up ur us ut va ve vi
    vo wa we wh wi wn wo wr ws xa xc xe xi xp xt xy ye yg yi yl ym yn yo yp yr ys yt yw za ze zi
    """)
_HEX_LOWER = frozenset("0123456789abcdef")
_HEX_UPPER = frozenset("0123456789ABCDEF")

_PATHISH_RE = re.compile(r"(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]*)+|[A-Za-z]:\\[\w\\.\- ]+")
_URLISH_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_EMAIL_RE = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_VERSION_RE = re.compile(r"v?\d+(?:\.\d+)+(?:[\-+][\w.\-]+)?")
_NUMBERISH_RE = re.compile(r"[\d.,:\-+/ ]+")


def shannon_entropy(value: str) -> float:
    """Bits per character of the value's own character distribution."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def class_count(value: str) -> int:
    """How many of lower, upper, digit, other the value mixes."""
    lower = upper = digit = other = 0
    for ch in value:
        if ch.islower():
            lower = 1
        elif ch.isupper():
            upper = 1
        elif ch.isdigit():
            digit = 1
        else:
            other = 1
    return lower + upper + digit + other


def _cls(ch: str) -> int:
    if ch.islower():
        return 0
    if ch.isupper():
        return 1
    if ch.isdigit():
        return 2
    return 3


def switch_rate(value: str) -> float:
    """Share of adjacent pairs that change character class.

    Random tokens flip between classes constantly, while words, identifiers and kebab-case
    names change class only at their few separators; entropy alone cannot tell them apart.
    """
    if len(value) < 2:
        return 0.0
    switches = sum(1 for a, b in itertools.pairwise(value) if _cls(a) != _cls(b))
    return switches / (len(value) - 1)


def _vocab_only(value: str) -> bool:
    words = _WORD_RE.findall(value)
    if not words:
        return False
    return all(not w.isdigit() and w.lower() in _VOCAB for w in words)


def is_placeholder(value: str, *, literal: bool = False) -> bool:
    """True for stand-ins, references and redaction marks that carry no real secret.

    `literal`: the value was quoted, so "Cielo.Kedi26" is a string, not an attribute access.
    Unquoted, a dotted value with a capital and a digit ("Tanne.Berg77" in a .env file) is
    typed too: attribute chains in code are lower-case or constants without digits.
    """
    v = value.strip()
    if not v or v[0] in _SIGILS:
        return True
    if _MARKER_RE.search(v) or _REFERENCE_RE.search(v):
        return True
    if _CODE_RE.match(v):
        return True
    if _DOTTED_RE.fullmatch(v) and not _typed_dotted(v, literal):
        return True
    if len(set(v.lower()) - set("-_.:/ ")) <= 2:
        return True
    # An identifier that names a secret (DB_PASSWORD, settings.SECRET_KEY) is a variable.
    if _IDENT_RE.fullmatch(v) and _SECRETISH_RE.search(v):
        return True
    return _vocab_only(v)


def _typed_dotted(v: str, literal: bool) -> bool:
    if not any(ch.isdigit() for ch in v):
        return False
    if literal:
        return True
    return any(ch.isupper() for ch in v) and any(ch.islower() for ch in v) and "_" not in v


def is_stand_in(value: str) -> bool:
    """A template, reference, mask or filler word where a value would go (not code rules)."""
    v = value.strip()
    if not v or v[0] in "$%{<[*":
        return True
    if _MARKER_RE.search(v) or _REFERENCE_RE.search(v):
        return True
    return len(set(v.lower()) - set("-_.:/ ")) <= 2 or v.lower() in STOPWORDS or _vocab_only(v)


def _is_ordinary_shape(v: str) -> bool:
    return bool(
        _URLISH_RE.match(v)
        or _PATHISH_RE.fullmatch(v)
        or _EMAIL_RE.fullmatch(v)
        or _VERSION_RE.fullmatch(v)
        or _NUMBERISH_RE.fullmatch(v)
    )


def _alphabet_size(value: str) -> int:
    size = 0
    if any(ch.islower() for ch in value):
        size += 26
    if any(ch.isupper() for ch in value):
        size += 26
    if any(ch.isdigit() for ch in value):
        size += 10
    return size + len({ch for ch in value if not ch.isalnum()})


def _expected_entropy(alphabet: int, n: int) -> float:
    # Shannon entropy of n uniform draws from the alphabet, with the Miller-Madow bias term:
    # short samples fall well below log2(alphabet), so a fixed threshold would miss them.
    ceiling = min(math.log2(max(alphabet, 2)), math.log2(n))
    return max(1.0, ceiling - (alphabet - 1) / (2 * n * math.log(2)))


def _is_hex(value: str) -> bool:
    bare = value.replace("-", "")
    return len(bare) >= 16 and (set(bare) <= _HEX_LOWER or set(bare) <= _HEX_UPPER)


def _rare_pair_share(value: str) -> tuple[int, float]:
    pairs = rare = 0
    for a, b in itertools.pairwise(value):
        if a.isascii() and b.isascii() and a.isalpha() and b.isalpha():
            pairs += 1
            if (a + b).lower() not in _COMMON_PAIRS:
                rare += 1
    return pairs, (rare / pairs if pairs else 0.0)


def looks_random(value: str) -> bool:
    """A token-like value: long, near the entropy of its alphabet, and not made of words.

    Tuned on random tokens of every common alphabet (hex, base32, base62, base64, url-safe;
    16 to 64 chars) against ~100k identifiers and literals from the Python standard library:
    about 1.5% of tokens are missed (mostly 16-20 chars) and 0.3% of identifiers pass.
    """
    v = value.strip()
    n = len(v)
    if n < 16 or n > 1024 or any(ch.isspace() for ch in v):
        return False
    if is_placeholder(v) or _is_ordinary_shape(v) or v.startswith("//") or class_count(v) < 2:
        return False
    entropy = shannon_entropy(v)
    if _is_hex(v):
        # Hex carries no words to test; a hex value given to a secret name is a key.
        return entropy >= 0.8 * _expected_entropy(16, n) and not v.replace("-", "").isdigit()
    if entropy < 0.8 * _expected_entropy(_alphabet_size(v), n):
        return False
    pairs, rare = _rare_pair_share(v)
    if pairs < 4:
        return class_count(v) >= 3 and switch_rate(v) >= 0.4
    # English letter pairs dominate identifiers and prose; random text hits rare pairs
    # half the time, and random mixed case also flips class at most positions.
    return rare >= 0.25 or (rare >= 0.15 and switch_rate(v) >= 0.45)


def plausible_password(value: str, *, phrase: bool = False, literal: bool = False) -> bool:
    """A literal given to a password-named key in a config or code assignment.

    Only a passphrase may contain spaces: a "password" value with spaces is a description
    ("Password used to generate key"), not the password.
    """
    v = value.strip()
    if len(v) < 4 or len(v) > 256 or is_placeholder(v, literal=literal):
        return False
    if v.lower() in STOPWORDS or _SNAKE_RE.fullmatch(v) or _CAMEL_TYPE_RE.fullmatch(v):
        return False
    if not phrase and any(ch.isspace() for ch in v):
        return False
    return not (_URLISH_RE.match(v) or _PATHISH_RE.fullmatch(v) or _EMAIL_RE.fullmatch(v))


def password_like(value: str) -> bool:
    """A password mentioned in running prose: it must look like one, not like a word."""
    v = value.strip()
    if len(v) < 6 or not plausible_password(v) or _is_ordinary_shape(v):
        return False
    if not any(ch.isalpha() for ch in v) or _HYPHENATED_RE.fullmatch(v):
        return False
    if any(not ch.isalpha() for ch in v):
        return True
    # Letters only: irregular case (hViIMTloiO) is a password, while a capitalised word or
    # CamelCase (Tuesday, HiddenText) is prose or a type name.
    has_upper = any(ch.isupper() for ch in v)
    has_lower = any(ch.islower() for ch in v)
    return has_upper and has_lower and not _WORDISH_CASE_RE.fullmatch(v)


# Technical words with digits that prose puts after "key" or "token" without naming one.
_TECH_TERMS = _set("""
    sha1 sha224 sha256 sha384 sha512 sha3 md5 base64 base32 base58 utf8 utf-8 utf16 ed25519
    ed448 x25519 rsa2048 rsa3072 rsa4096 aes128 aes192 aes256 aes-128 aes-256 hmac-sha256
    pbkdf2 argon2 argon2id scrypt bcrypt x509 oauth2 oauth1 http2 http3 ipv4 ipv6 tls1.2
    tls1.3 p256 p384 secp256k1 secp256r1 curve25519 chacha20 poly1305 blake2b blake3 fido2
    webauthn2 2fa mfa totp hotp u2f yubikey5 win10 win11 k8s i18n l10n
    """)
_FILE_RE = re.compile(
    r"[\w.\-]+\.(?:txt|md|json|ya?ml|toml|ini|env|py|js|ts|sh|cfg|conf|log|csv|html?|pdf|png"
    r"|jpe?g|gif|key|pem|pub|gpg|asc|kdbx|crt|cer|p12|pfx|zip|gz|tar|sql|xml|docx?|xlsx?)",
    re.IGNORECASE,
)
_LOWER_DOTTED_RE = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+")
# Words joined by dots and closed by digits ("ulivo.byeol.bambu2800") are typed, not a
# module path ("os.path", "email.mime.text").
_DOTTED_WORDS_RE = re.compile(r"[a-z]{3,}(?:\.[a-z]{3,}){2,}\d{2,}")
_ENV_NAME_RE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_NOT_A_VALUE_RE = re.compile(
    r"(?:ssh|ecdsa|sk-ssh)-|AAAA[BC]3NzaC|data:|-----|[A-Za-z][\w+.-]*://|mailto:|www\.",
    re.IGNORECASE,
)
# In prose "*" is emphasis and "!" punctuation, so fewer leading characters mark a reference.
_PROSE_SIGILS = frozenset("$%{[(<@&:=}])~")
# Names from code: "cl100k_base", "_PasswordType", "HTTPResponse.data", "pq.PQchange".
_CODE_NAME_RE = re.compile(
    r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+|_\w+|(?:[A-Za-z_][A-Za-z0-9_]*\.)+[A-Za-z_]+(?:\(\))?"
)
# A type or variable that names a secret: "Ed25519PrivateKey", "PasswordType", "authToken".
_NAMES_SECRET_RE = re.compile(
    r"(?:Password|Passwd|Secret|Token|PrivateKey|PublicKey|Key|Credential)s?(?:[A-Z0-9_]|Type|$)"
)
# A filler word with a few digits: "password1", "secret123", "admin2" (examples).
_WORD_DIGITS_RE = re.compile(r"(?P<word>[A-Za-z]+)[0-9]{1,4}[!.]?")
_IDENTISH_RE = re.compile(r"[A-Za-z0-9_.]+")
_BRAND_RE = re.compile(r"\d[A-Z][a-z]+")
# Issue and document keys: "SEC-4821", "ADR-0007".
_TICKET_RE = re.compile(r"[A-Z][A-Z0-9]{1,9}-\d{1,6}")
_DATE_TIME_RE = re.compile(r"\d{1,4}(?:[./:\-]\d{1,4})+(?:[ T]?\d{1,2}(?::\d{2}){1,2})?")


def prose_password(value: str) -> bool:
    """A word given as a password in running text: it looks typed, not like a word or a name.

    Looser than `password_like` about dots and dictionary parts ("Nebel.Tanne5372",
    "meadow-lantern-cobalt67") and stricter about file names, env names and technical terms.
    """
    v = value.strip()
    n = len(v)
    if n < 6 or n > 128 or any(ch.isspace() for ch in v) or v[0] in _PROSE_SIGILS:
        return False
    # Code names, product names, issue keys, types naming a secret, and filler words with a
    # digit ("cl100k_base", "1Password", "SEC-4821", "Ed25519PrivateKey", "password1").
    if _CODE_NAME_RE.fullmatch(v) or _BRAND_RE.fullmatch(v) or _TICKET_RE.fullmatch(v):
        return False
    if _NAMES_SECRET_RE.search(v) and _IDENTISH_RE.fullmatch(v):
        return False
    word = _WORD_DIGITS_RE.fullmatch(v)
    if word is not None and word.group("word").lower() in _VOCAB:
        return False
    if v[0] == "!" and v[1:].isalpha() and v[1:].islower():
        return False  # a YAML tag: "!vault", "!secret"
    if any(ch in v for ch in "<>|[]") or v.count("/") >= 2 or v.count("\\") >= 2:
        return False  # a template slot or a path
    if _MARKER_RE.search(v) or _REFERENCE_RE.search(v) or _NOT_A_VALUE_RE.match(v):
        return False
    if len(set(v.lower()) - set("-_.:/ ")) <= 2 or v.lower() in _TECH_TERMS:
        return False
    if _FILE_RE.fullmatch(v) or _ENV_NAME_RE.fullmatch(v):
        return False
    if _LOWER_DOTTED_RE.fullmatch(v) and not _DOTTED_WORDS_RE.fullmatch(v):
        return False
    if _CODE_RE.match(v) or _is_ordinary_shape(v) or _DATE_TIME_RE.fullmatch(v):
        return False
    if v.lower() in STOPWORDS or _vocab_only(v) or _SNAKE_RE.fullmatch(v):
        return False
    if not any(ch.isalpha() for ch in v):
        return False
    if any(not ch.isalpha() for ch in v):
        # A letter word with a hyphen but no digit ("E-Mail-basiert") is a compound word.
        return not _HYPHENATED_RE.fullmatch(v)
    has_upper = any(ch.isupper() for ch in v)
    has_lower = any(ch.islower() for ch in v)
    if not (has_upper and has_lower):
        return False
    # Identifiers split into words of three letters or more ("HTTPPasswordMgr"); typed
    # letters flip case at random and leave short pieces ("hViIMTloiO").
    pairs, rare = _rare_pair_share(v)
    if all(len(part) >= 3 for part in _WORD_RE.findall(v)) and rare < 0.2:
        return False
    if not _WORDISH_CASE_RE.fullmatch(v):
        return True
    # Camel-case shaped but not made of words: "bnlrrBxoQt" has rare letter pairs throughout.
    return n >= 8 and pairs >= 6 and rare >= 0.35


def strong_password(value: str) -> bool:
    """A password-like word that needs no label grammar around it: long, three classes."""
    v = value.strip()
    return len(v) >= 8 and class_count(v) >= 3 and prose_password(v)


def pin_like(value: str) -> bool:
    """Four to twelve digits that are not one digit repeated."""
    v = value.strip()
    return v.isdigit() and 4 <= len(v) <= 12 and len(set(v)) > 1


def token_like(value: str) -> bool:
    """A machine-made value: random-looking, long hex, or a long mix of letters and digits."""
    v = value.strip()
    if looks_random(v):
        return True
    if len(v) < 8 or not any(ch.isdigit() for ch in v) or not prose_password(v):
        return False
    return class_count(v) >= 3 or len(v) >= 12


_NUMERIC_RE = re.compile(r"\d+(?:[-. ]\d+)*")


def numeric_password(value: str) -> bool:
    """A long number given as a password (router keys are often 16 to 20 digits)."""
    v = value.strip()
    if not _NUMERIC_RE.fullmatch(v):
        return False
    digits = sum(ch.isdigit() for ch in v)
    # Eight digits or fewer with separators is a date, a time or a phone extension.
    return digits >= 10 and len(set(v)) > 3


# Words of prose that a sentence after "passphrase:" uses and a generated passphrase does
# not ("see the vault entry", "siehe Tresor", "voir dans le coffre").
_PHRASE_FILLER = _set("""
    the and see for with from that this are was not ask stored store saved kept lives vault
    entry keepass bitwarden lastpass manager below above same usual old new one our your
    siehe unter und der die das den dem ist wie bei voir dans avec pour les des une est ver
    con para los las una por vedi nel nella con per veja com zie het een met voor van
    смотри patrz jest bkz ile için
    """)


def prose_phrase(value: str) -> bool:
    """Whether words after a passphrase label read as a sentence ("ask the infra team")."""
    return any(w.lower() in _PHRASE_FILLER for w in value.split())


def diceware_phrase(value: str) -> bool:
    """Four to eight lowercase words of three letters or more: a generated passphrase."""
    words = value.split()
    if not 4 <= len(words) <= 8 or not all(w.isalpha() and w.islower() for w in words):
        return False
    if any(w in _PHRASE_FILLER or w in _VOCAB or w in STOPWORDS for w in words):
        return False
    return len(set(words)) >= 3


_RECOVERY_RE = re.compile(r"[A-Za-z0-9]{4,6}-[A-Za-z0-9]{4,6}|\d{4} \d{4}|[A-Za-z0-9]{8,12}")


def recovery_code(value: str) -> bool:
    """A one-time recovery code: digits mixed with letters ("01bb1-e2458") or digit groups."""
    if not _RECOVERY_RE.fullmatch(value):
        return False
    bare = value.replace("-", "").replace(" ", "")
    if bare.isdigit():
        # Digit groups are codes when spaced ("1234 5678"); "2024-0517" is a date or a number.
        return "-" not in value and len(set(bare)) > 3
    digits = sum(ch.isdigit() for ch in bare)
    letters = len(bare) - digits
    return digits > 0 and letters > 0 and len(set(bare.lower())) >= 5


# A door or gate code: digits with a letter ("6182D", "A4417"), or groups of capitals and
# digits ("GWSA-ZBHO", "7KQ2-19XA").
_ACCESS_CODE_RE = re.compile(r"[A-Za-z0-9]{4,10}|[A-Z0-9]{3,6}(?:-[A-Z0-9]{3,6}){1,2}")
# A safe's dial: "38-12-77".
_DIAL_RE = re.compile(r"\d{1,2}(?:-\d{1,2}){2,3}")
_SEQUENCE = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def access_code(value: str) -> bool:
    """A code a door, a gate or a building asks for: short, digits and maybe a letter, or a
    keypad's closing key ("3286#", "6503*")."""
    v = value.strip()
    if v[-1:] in ("#", "*") and v[:-1].isdigit():
        v = v[:-1]
    if pin_like(v) or _DIAL_RE.fullmatch(v):
        return True
    if not _ACCESS_CODE_RE.fullmatch(v) or is_stand_in(v):
        return False
    bare = v.replace("-", "")
    if bare.upper() in _SEQUENCE:
        return False  # "ABCD-EFGH": a sequence standing in for a code
    digits = sum(ch.isdigit() for ch in bare)
    if "-" in v:
        return len(set(bare)) >= 5 and not _TICKET_RE.fullmatch(v)
    # "6182D", "B7731": a few digits and a letter or two; "v2", "abc1", "2FA" are words.
    return digits >= 3 and len(bare) - digits <= 2 and v.lower() not in _TECH_TERMS


# Characters a network name uses too ("Vodafone-4C2A", "HomeNet_5G", "o2.WLAN"): a Wi-Fi
# value needs some other sign to be its key rather than its name.
_SSID_SIGNS = frozenset("-_. ")


def wifi_key(value: str) -> bool:
    """The key after a Wi-Fi label, not the network's name: random, or a password with a
    digit and a sign no network name uses ("itvDEpr%WgPv2", "marmor#kolibri#komeet617")."""
    v = value.strip()
    if looks_random(v):
        return True
    signs = {ch for ch in v if not ch.isalnum()} - _SSID_SIGNS
    return bool(signs) and any(ch.isdigit() for ch in v) and strong_password(v)


# A password typed with a leading sign, after its label: "$sparrowFjord94", "&cometSparrow4496".
_SIGIL_LEADS = frozenset("$%&@=!#*+")
_SIGIL_REST_RE = re.compile(r"[A-Za-z0-9!#%&*+=?_.-]+")


def sigil_password(value: str) -> bool:
    """A password that starts with a sign prose uses for references ("$HOME", "@alice"):
    only its label makes it one, and the rest must be a typed password of three classes."""
    v = value.strip()
    if len(v) < 9 or v[0] not in _SIGIL_LEADS or v[-1] == v[0]:
        return False
    rest = v[1:]
    if not _SIGIL_REST_RE.fullmatch(rest) or not any(ch.isdigit() for ch in rest):
        return False
    return (
        any(ch.isupper() for ch in rest)
        and any(ch.islower() for ch in rest)
        and prose_password(rest)
    )


# Lowercase words joined by one sign: "kiwi_ulivo_comet_ember72", "zephyr.quartz.sora".
_JOINED_RE = re.compile(
    r"[a-z]{2,12}\d{0,3}(?P<sep>[._-])[a-z]{2,12}\d{0,3}(?:(?P=sep)[a-z]{2,12}\d{0,3}){1,6}"
)


def phrase_words(value: str) -> bool:
    """Three to eight words after a passphrase label, joined by spaces, dots, dashes or
    underscores: no word of prose among them, and no word repeated."""
    v = value.strip().lower()
    if " " in v:
        words = v.split()
        if not all(w.isalpha() for w in words[:-1]) or not words[-1].rstrip("0123456789").isalpha():
            return False
    elif _JOINED_RE.fullmatch(v):
        words = re.split(r"[._-]", v)
    else:
        return False
    if not 3 <= len(words) <= 8 or len(set(words)) < 3:
        return False
    return not any(w in _PHRASE_FILLER or w in STOPWORDS for w in words)


_LETTERS = "a-zß-ÿıłńśźżąćęğşа-яё"
# Three words or more to the end of the line or the closing quote: "lavande kiwi cobalt".
_WORDS_TO_END_RE = re.compile(
    f"[{_LETTERS}]{{2,16}}(?: [{_LETTERS}]{{2,16}}){{1,7}}\\d{{0,3}}"
    "(?=[\"”»'」]?[ \t]*[.]?[ \t]*$)",
    re.MULTILINE,
)


def phrase_at(text: str, pos: int) -> tuple[int, int] | None:
    """The span of a passphrase of plain words starting at `pos`, if one ends its line."""
    m = _WORDS_TO_END_RE.match(text, pos)
    return m.span() if m is not None and phrase_words(m.group()) else None

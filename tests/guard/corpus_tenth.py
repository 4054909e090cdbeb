"""The tenth batch for the credential guard (`TENTH`, ids t10-*), kept apart from
`corpus_multilingual` and `corpus_later` for size (rows in `corpus_tenth_rows`).

Written unseen, without looking at detector code or earlier cases, and measured once at
recall 0.740 (before round 1), 0.822 (after round 2) and 0.861 / FPR 0 (after round 3),
then tuned on in round 4.  Values are generated from seeds at import time; templates mark
the value with a §name§ marker (one per positive), so no realistic credential is stored
literally in the repository.
"""

from __future__ import annotations

import base64
import html
import random
import re
import string
import urllib.parse

from .case import Case
from .corpus import ALNUM, B64, DIGITS, HEX, UPPER, URLSAFE, jwt, pem_body, tok
from .corpus_tenth_rows import IMG, ROWS, SHA256, UUID
from .corpus_tenth_rows_b import ROWS_B

__all__ = ["TENTH"]

LOWER = string.ascii_lowercase
_BIRDS = ["Kestrel", "Heron", "Puffin", "Osprey", "Wren", "Plover"]
_BIRDS += ["Magpie", "Curlew", "Avocet", "Lapwing", "Bittern", "Dunlin"]
_RIVERS = ["Danube", "Loire", "Vistula", "Douro", "Tagus", "Ebro"]
_RIVERS += ["Volga", "Shannon", "Tweed", "Garonne", "Neretva", "Mosel"]
_CHEESES = ["Gouda", "Comte", "Brie", "Feta", "Manchego", "Halloumi"]
_CHEESES += ["Stilton", "Gruyere", "Taleggio", "Roquefort", "Edam", "Pecorino"]
_WORDS = _BIRDS + _RIVERS + _CHEESES
_SURNAMES = {
    "en": "Pemberton Ashworth Callaghan",
    "de": "Brandstetter Hufnagel Zeilinger",
    "fr": "Lemaire Duchesne Marchetti",
    "es": "Quintero Villalobos Arrieta",
    "it": "Ferrandi Lombardini Sartori",
    "pt": "Albuquerque Sampaio Figueiredo",
    "nl": "Verhoeven Timmermans Dijkstra",
    "ru": "Соколова Белоусова Журавлёва",
    "pl": "Wiśniewska Zawadzka Kowalczyk",
    "tr": "Yıldırım Karaca Aydoğan",
    "zh": "欧阳 司马 诸葛",
    "ja": "岡部 武田 小野寺",
    "ko": "황보 남궁 선우",
}


def _pw(seed: str) -> str:
    rng = random.Random("t10pw" + seed)
    s = rng.randrange(9)
    a, b, c = rng.sample(_WORDS, 3)
    d = "".join(rng.choice(DIGITS) for _ in range(rng.randrange(2, 5)))
    sym = rng.choice("!#$%&*?@_+")
    if s == 0:
        return f"{a}.{b}{d}"
    if s == 1:
        return f"{a.lower()}-{b.lower()}-{c.lower()}{d[:2]}"
    if s == 2:
        return f"{a}{d}{sym}"
    if s == 3:
        leet = a.replace("e", "3").replace("o", "0").replace("a", "@")
        return f"{leet}{sym}{d}"
    if s == 4:
        return f"{a}{b}{sym}{d}"
    if s == 5:
        return tok(seed, ALNUM + "!#%*+=", 14)
    if s == 6:
        return f"{a.lower()}{d}"
    if s == 7:
        return f"{a}_{b}_{d}{sym}"
    return f"{d}{a}{b.lower()}{sym}"


def _pin(seed: str) -> str:
    rng = random.Random("t10pin" + seed)
    return "".join(rng.choice(DIGITS) for _ in range(rng.choice((4, 4, 5, 6))))


def _code(seed: str) -> str:
    rng = random.Random("t10code" + seed)
    d = "".join(rng.choice(DIGITS) for _ in range(rng.choice((4, 5, 6))))
    return rng.choice((d + "#", d + "*", d + rng.choice("ABCDK"), "*" + d + "#", d + "#"))


def _rec(seed: str) -> str:
    a = LOWER + DIGITS
    return f"{tok(seed + 'a', a, 4)}-{tok(seed + 'b', a, 4)}"


def _phrase(seed: str) -> str:
    rng = random.Random("t10ph" + seed)
    return " ".join(w.lower() for w in rng.sample(_WORDS, 4))


def _pem(seed: str) -> str:
    kind = random.Random(seed).choice(
        ("RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY")
    )
    return f"-----BEGIN {kind}-----\n{pem_body('t10' + seed, 5)}\n-----END {kind}-----"


_GEN = {
    "pw": _pw,
    "pin": _pin,
    "code": _code,
    "rec": _rec,
    "phrase": _phrase,
    "maiden": lambda s: random.Random("t10m" + s).choice(_SURNAMES[s.split("-")[0]].split()),
    "pem": _pem,
    "jwt": lambda s: jwt("t10" + s),
    "bearer": lambda s: tok("t10b" + s, URLSAFE, 40),
    "hex": lambda s: tok("t10h" + s, HEX, 32),
    "ghp": lambda s: "ghp_" + tok("t10" + s, ALNUM, 36),
    "ghf": lambda s: "github_pat_" + tok("t10a" + s, ALNUM, 22) + "_" + tok("t10b" + s, ALNUM, 59),
    "xoxb": lambda s: (
        f"xoxb-{tok(s + '1', DIGITS, 12)}-{tok(s + '2', DIGITS, 13)}-{tok(s + '3', ALNUM, 24)}"
    ),
    "xoxp": lambda s: (
        f"xoxp-{tok(s + '1', DIGITS, 12)}-{tok(s + '2', DIGITS, 12)}-{tok(s + '3', HEX, 32)}"
    ),
    "akia": lambda s: "AKIA" + tok("t10" + s, UPPER + "234567", 16),
    "awss": lambda s: tok("t10aws" + s, B64, 40),
    "sklive": lambda s: "sk_live_" + tok("t10" + s, ALNUM, 24),
    "rklive": lambda s: "rk_live_" + tok("t10" + s, ALNUM, 24),
    "skproj": lambda s: "sk-proj-" + tok("t10" + s, URLSAFE, 48),
    "skant": lambda s: "sk-ant-api03-" + tok("t10" + s, URLSAFE, 93) + "AA",
    "glpat": lambda s: "glpat-" + tok("t10" + s, URLSAFE, 20),
    "aiza": lambda s: "AIza" + tok("t10" + s, URLSAFE, 35),
    "hf": lambda s: "hf_" + tok("t10" + s, ALNUM, 34),
    "sg": lambda s: "SG." + tok("t10a" + s, URLSAFE, 22) + "." + tok("t10b" + s, URLSAFE, 43),
    "shpat": lambda s: "shpat_" + tok("t10" + s, HEX, 32),
}
_MARK = re.compile(r"§(\w+)§")


def _build(lang: str, pos: list[tuple[str, str]], neg: list[tuple[str, str]]) -> list[Case]:
    out: list[Case] = []
    for i, (kind, tpl) in enumerate(pos):
        m = _MARK.search(tpl)
        assert m, (lang, i, tpl)
        value = _GEN[m.group(1)](f"{lang}-{i}")
        text = tpl[: m.start()] + value + tpl[m.end() :]
        out.append(Case(f"t10-{lang}-p{i:02d}-{kind}", lang, kind, text, value))
    for i, (kind, text) in enumerate(neg):
        out.append(Case(f"t10-{lang}-n{i:02d}-{kind}", lang, kind, text))
    return out


_CASES: list[Case] = []
for _lang, (_pos, _neg) in (ROWS | ROWS_B).items():
    _CASES += _build(_lang, _pos, _neg)


# ---------------------------------------------------------------- encoded (any)
def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


_E_GHP = _GEN["ghp"]("enc-1")
_E_SK = _GEN["sklive"]("enc-2")
_E_PW = "Osprey&Brie#" + tok("enc-pw", DIGITS, 3)
_E_PW2 = "Curlew@Ebro%" + tok("enc-pw2", DIGITS, 2)
_E_XOXB = _GEN["xoxb"]("enc-3")
_E_GL = _GEN["glpat"]("enc-4")
_E_AKIA = _GEN["akia"]("enc-5")
_E_PROJ = _GEN["skproj"]("enc-6")
_E_HF = _GEN["hf"]("enc-7")
_E_PW3 = _pw("enc-8")
_E_PW4 = _pw("enc-9")
_ZW = "\u200b"

_enc_pos: list[tuple[str, str]] = []


def _ep(text: str, secret: str) -> None:
    assert secret in text
    _enc_pos.append((text, secret))


_s = _b64(_E_GHP)
_ep(f"ci token (base64, decode before use): {_s}", _s)
_s = _b64(_E_PW)
_ep(f"apiVersion: v1\nkind: Secret\ndata:\n  username: {_b64('admin')}\n  password: {_s}", _s)
_s = _b64("deploy:" + _E_PW2)
_ep(f"Authorization: Basic {_s}", _s)
_s = _b64(_E_SK)
_ep(f"STRIPE_KEY_B64={_s}", _s)
_s = urllib.parse.quote(_E_PW, safe="")
_ep(f"https://admin:{_s}@router.lan/cgi-bin/luci", _s)
_s = _E_GHP[:3] + "%5F" + _E_GHP[4:]
_ep(f"https://api.example.com/hook?token={_s}&ref=main", _s)
_s = "ghp&#95;" + _E_GHP[4:]
_ep(f"<p>token: <code>{_s}</code></p>", _s)
_s = html.escape("Heron&Feta<" + tok("enc-pw5", DIGITS, 3))
_ep(f"<tr><td>password</td><td>{_s}</td></tr>", _s)
_s = "**sk_live_**" + _E_SK[8:]
_ep(f"Stripe key: {_s}", _s)
_s = "`xoxb-`" + "`" + _E_XOXB[5:] + "`"
_ep(f"slack bot: {_s}", _s)
_s = _E_GL[:6] + _ZW + _E_GL[6:14] + _ZW + _E_GL[14:]
_ep(f"gitlab token {_s}", _s)
_s = "\u0410" + _E_AKIA[1:]  # Cyrillic А
_ep(f"aws_access_key_id = {_s}", _s)
_s = "sk-рrоj-" + _E_PROJ[8:]  # Cyrillic р, о
_ep(f"OPENAI_API_KEY={_s}", _s)
_ep(f"\u03a1assword: {_E_PW3}", _E_PW3)  # Greek Rho in the label
_ep(f"pass{_ZW}word = {_E_PW4}", _E_PW4)

_enc_neg = [
    "Content-Transfer-Encoding: base64\n\n"
    + _b64("Hi team, the offsite is moved to Thursday. See you there!"),
    "config (base64): " + _b64('{"theme": "dark", "fontSize": 14, "lang": "en"}'),
    "avatar: " + IMG,
    "sha256 of the encoded bundle: " + SHA256,
    "search: https://example.com/search?q=caf%C3%A9%20au%20lait&page=2",
    "<p>Tom &amp; Jerry &lt;3 &mdash; a classic</p>",
    "**Don't** paste the *password* into the ticket, use the __vault__ link.",
    "Пароль хранится в менеджере паролей, спросите у Ольги.",
    "Ο κωδικός πρόσβασης βρίσκεται στο Bitwarden, ρωτήστε τον Νίκο.",
    "Authorization: Basic <base64(user:password)>",
    "Run `npm ci` then `npm run build -- --token-limit 4096`.",
    "docs: /wiki/Gu%C3%ADa%20r%C3%A1pida%20de%20acceso.pdf",
    "meeting" + _ZW + "notes: agenda moved to Monday",
    "Код ошибки: 0x" + tok("t10-err", HEX, 8).upper() + ", смотрите журнал.",
    "build id (base64url): " + base64.urlsafe_b64encode(UUID.encode()).decode().rstrip("="),
]

_CASES += [
    Case(f"t10-any-e{i:02d}-encoded", "any", "encoded", t, s) for i, (t, s) in enumerate(_enc_pos)
]
_CASES += [Case(f"t10-any-f{i:02d}-encoded", "any", "encoded", t) for i, t in enumerate(_enc_neg)]


TENTH: tuple[Case, ...] = tuple(_CASES)


def _check() -> None:
    ids = [c.id for c in TENTH]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for c in TENTH:
        assert c.id.startswith("t10-")
        if c.secret:
            assert c.secret in c.text, c.id
        assert "§" not in c.text, c.id


_check()

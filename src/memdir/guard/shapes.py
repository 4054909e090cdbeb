"""Structural credentials: private-key blocks, JWTs, URLs and command lines carrying passwords."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import re
from collections.abc import Iterator

from .hit import PRIO_SHAPE, PRIO_VENDOR, Hit
from .values import is_stand_in, looks_random, plausible_password, prose_password

__all__ = ["shape_hits"]


def _set(words: str) -> frozenset[str]:
    """A set from whitespace-separated words; keeps long vocabularies readable."""
    return frozenset(words.split())


_PEM_BEGIN_RE = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY(?: BLOCK)?-----")
_PEM_END_RE = re.compile(r"-----END [A-Z0-9 ]{0,40}-----")
# Key material must start soon after the header, leaving room for PEM headers (Proc-Type,
# Version) and JSON-escaped newlines as in a GCP service-account file.
_PEM_BODY_RE = re.compile(r"[A-Za-z0-9+/=]{24,}")
_PEM_LOOKAHEAD = 300
_PEM_MAX_BLOCK = 65536

_PUTTY_RE = re.compile(r"PuTTY-User-Key-File-\d+: ")
_PUTTY_PRIVATE_RE = re.compile(r"Private-Lines: *\d+\s*[\r\n]+([A-Za-z0-9+/=\r\n]{24,})")

_JWT_RE = re.compile(
    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}(?![A-Za-z0-9_-])"
)

# Matched from "://" (a cheap literal); the scheme is read backwards in Python.
# An "@" inside the password ("M@gpi3#2481@intranet") when another "@" follows before the
# path or query.
_URL_CRED_RE = re.compile(
    r"://([^\s:/?#@\"'<>`]{0,256}):"
    r"([^\s/@\"'<>`](?:[^\s/@\"'<>`]|@(?=[^\s/?@\"'<>`]*@)){0,255})@(?=[A-Za-z0-9\[_-])"
)
_EXAMPLE_HOST_RE = re.compile(
    r"(?:[A-Za-z0-9-]+\.)*(?:example\.(?:com|org|net)|[A-Za-z0-9-]+\.(?:example|invalid|test))"
    r"(?![A-Za-z0-9.-])"
)
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_DB_SCHEMES = _set("""
    postgres postgresql mysql mariadb mongodb mongodb+srv redis rediss amqp amqps mssql
    sqlserver oracle cockroachdb clickhouse kafka nats ldap ldaps db2 couchdb neo4j neo4j+s
    bolt cassandra memcached elasticsearch opensearch influxdb snowflake presto trino
    """)

_BEARER_RE = re.compile(
    r"[Bb](?:earer|EARER)[ \t]+([A-Za-z0-9._~+/-]{16,}=*)(?![A-Za-z0-9._~+/=-])"
)
_AUTH_TOKEN_RE = re.compile(
    r"Authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:[Tt]oken|[Aa]pikey|SSWS)[ \t]+"
    r"([A-Za-z0-9._~+/-]{12,}=*)"
)
_BASIC_RE = re.compile(r"[Bb]asic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")
_CURL_USER_RE = re.compile(r"-(?:u|-user)[ \t=]+[\"']?([^\s:\"'$]{1,64}):([^\s\"']{1,128})")
_MYSQL_RE = re.compile(
    r"(?:mysql(?:dump|admin)?|mariadb)[ \t][^\n]{0,200}?[ \t]-p[\"']?([^\s\"'-][^\s\"']{2,127})"
)
_REDIS_CLI_RE = re.compile(r"redis-cli[^\n]{0,200}?[ \t]-a[ \t]+[\"']?([^\s\"']{3,128})")
_SQL_RE = re.compile(r"(?i:identified)[ \t]+(?i:by)[ \t]+'([^'\n]{1,128})'")
# "docker login -u ci -p s3cret registry", "mongosh -u admin -p s3cret": found from the
# flag (a "-" is rare in prose), then the command is looked for earlier on its line.
_PASSWORD_FLAG_RE = re.compile(r"-(?:p|-password)(?:[ \t]+|=)[\"']?([^\s\"'-][^\s\"']{2,127})")
_LOGIN_CLI_RE = re.compile(
    r"(?:^|[\s;&|$])(?:(?:docker|podman|nerdctl|buildah|skopeo|oras|helm(?:[ \t]+registry)?)"
    r"[ \t]+login|mongo(?:sh|dump|restore|import|export)?)[ \t]"
)
_FLAG_REACH = 200
# A .pgpass line, found from its ":port:": host:port:database:user:password (":" and "\"
# escaped with "\").
_PGPASS_PORT_RE = re.compile(r":(?:\d{1,5}|\*):")
_PGPASS_RE = re.compile(
    r"[^\s:#]{1,253}:(?:\d{1,5}|\*):[^\s:]{1,63}:[^\s:]{1,63}:((?:[^\s:\\]|\\.){1,256})"
)
_PGPASS_LINE = 700
_SSHPASS_RE = re.compile(r"sshpass[ \t]+-p[ \t]*[\"']?([^\s\"']{3,128})")
_NETRC_RE = re.compile(r"machine\s+\S{1,253}\s+login\s+\S{1,256}\s+password\s+(\S{1,256})")


def _after_word(text: str, pos: int, extra: str) -> bool:
    """Whether the match at `pos` continues a word, so it is not a token of its own."""
    return pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] in extra)


def _scheme_before(text: str, pos: int) -> str | None:
    lo = pos
    while lo > 0 and pos - lo <= 30 and text[lo - 1] in _SCHEME_CHARS:
        lo -= 1
    while lo < pos and not text[lo].isalpha():
        lo += 1
    return text[lo:pos].lower() if pos - lo >= 2 else None


def _private_keys(text: str) -> Iterator[Hit]:
    headers = list(_PEM_BEGIN_RE.finditer(text))
    if not headers:
        return
    ends = [m.end() for m in _PEM_END_RE.finditer(text)]
    bodies = [(m.start(), m.end()) for m in _PEM_BODY_RE.finditer(text, headers[0].end())]
    pos = 0
    for m in headers:
        if m.start() < pos:
            continue
        j = bisect.bisect_left(bodies, (m.end(), 0))
        if j == len(bodies) or bodies[j][0] - m.end() > _PEM_LOOKAHEAD:
            continue  # a header followed by "..." or prose is documentation, not a key
        i = bisect.bisect_left(ends, m.end())
        # Redact through the END line when it is near, else just the key material seen.
        near = i < len(ends) and ends[i] - m.start() <= _PEM_MAX_BLOCK
        end = ends[i] if near else bodies[j][1]
        pos = end
        yield Hit(m.start(), end, "private key", PRIO_VENDOR)
    for m in _PUTTY_RE.finditer(text):
        body = _PUTTY_PRIVATE_RE.search(text, m.end(), m.end() + 8192)
        if body:
            yield Hit(body.start(1), body.end(1), "PuTTY private key", PRIO_VENDOR)


def _b64decode(data: str) -> bytes | None:
    padded = data + "=" * (-len(data) % 4)
    try:
        return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
    except (binascii.Error, ValueError):
        return None


def _jwts(text: str) -> Iterator[Hit]:
    for m in _JWT_RE.finditer(text):
        if _after_word(text, m.start(), "_-"):
            continue
        raw = _b64decode(m.group().split(".", 1)[0])
        if raw is None:
            continue
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if isinstance(header, dict) and "alg" in header:
            yield Hit(m.start(), m.end(), "JWT", PRIO_VENDOR)


def _url_credentials(text: str) -> Iterator[Hit]:
    for m in _URL_CRED_RE.finditer(text):
        scheme = _scheme_before(text, m.start())
        if scheme is None:
            continue
        user, password = m.group(1), m.group(2)
        # user == password ("postgres:postgres", "guest:guest") is a local default,
        # "user:password" / "${DB_PASSWORD}" are templates, example.com hosts are docs, and
        # a colon in the "password" is some other scheme (cvs://:pserver:anoncvs@host).
        if len(password) < 3 or password == user or ":" in password or is_stand_in(password):
            continue
        # Documentation hosts (example.com) carry examples; only a typed-looking password
        # there is taken for a real one pasted into an example-like setup.
        if _EXAMPLE_HOST_RE.match(text, m.end()) and not prose_password(password):
            continue
        kind = "connection string with password" if scheme in _DB_SCHEMES else "URL with password"
        yield Hit(m.start(2), m.end(2), kind, PRIO_SHAPE)


def _auth_headers(text: str) -> Iterator[Hit]:
    for regex in (_BEARER_RE, _AUTH_TOKEN_RE):
        for m in regex.finditer(text):
            if not _after_word(text, m.start(), "") and looks_random(m.group(1)):
                yield Hit(m.start(1), m.end(1), "bearer token", PRIO_SHAPE)
    for m in _BASIC_RE.finditer(text):
        if _after_word(text, m.start(), ""):
            continue
        raw = _b64decode(m.group(1))
        if raw is None:
            continue
        try:
            decoded = raw.decode("ascii")
        except UnicodeDecodeError:
            continue
        user, sep, password = decoded.partition(":")
        if sep and user and decoded.isprintable() and _is_real_password(user, password):
            yield Hit(m.start(1), m.end(1), "basic auth credential", PRIO_SHAPE)


def _is_real_password(user: str, password: str) -> bool:
    return password != user and not password.isdigit() and plausible_password(password)


def _command_lines(text: str) -> Iterator[Hit]:
    for m in _CURL_USER_RE.finditer(text):
        if m.start() > 0 and not text[m.start() - 1].isspace():
            continue
        if _is_real_password(m.group(1), m.group(2)):
            yield Hit(m.start(2), m.end(2), "basic auth password", PRIO_SHAPE)
    for regex, kind in (
        (_MYSQL_RE, "command-line password"),
        (_SSHPASS_RE, "command-line password"),
        (_REDIS_CLI_RE, "command-line password"),
        (_SQL_RE, "SQL password"),
    ):
        for m in regex.finditer(text):
            if plausible_password(m.group(1)):
                yield Hit(m.start(1), m.end(1), kind, PRIO_SHAPE)
    for m in _NETRC_RE.finditer(text):
        if plausible_password(m.group(1)):
            yield Hit(m.start(1), m.end(1), "netrc password", PRIO_SHAPE)
    yield from _login_flags(text)
    yield from _pgpass(text)


def _login_flags(text: str) -> Iterator[Hit]:
    for m in _PASSWORD_FLAG_RE.finditer(text):
        if m.start() == 0 or text[m.start() - 1] not in " \t":
            continue
        lo = max(text.rfind("\n", max(0, m.start() - _FLAG_REACH), m.start()) + 1, 0)
        if lo == 0 and m.start() > _FLAG_REACH:
            lo = m.start() - _FLAG_REACH
        if _LOGIN_CLI_RE.search(text, lo, m.start() + 1) and plausible_password(m.group(1)):
            yield Hit(m.start(1), m.end(1), "command-line password", PRIO_SHAPE)


def _pgpass(text: str) -> Iterator[Hit]:
    done = -1  # the end of the last line read: one look per line
    for m in _PGPASS_PORT_RE.finditer(text):
        if m.start() < done:
            continue
        lo = text.rfind("\n", max(0, m.start() - 254), m.start()) + 1
        hi = text.find("\n", m.end(), m.end() + _PGPASS_LINE)
        if hi < 0:
            hi = len(text) if len(text) - m.end() <= _PGPASS_LINE else m.end()
        done = hi
        if hi > lo and text[hi - 1] == "\r":
            hi -= 1
        if lo == 0 and m.start() > 254:
            continue  # the line's first field is longer than any host name
        line = _PGPASS_RE.fullmatch(text, lo, hi)
        if line is None:
            continue
        password = line.group(1)
        if not password.isdigit() and plausible_password(password):
            yield Hit(line.start(1), line.end(1), "pgpass password", PRIO_SHAPE)


def shape_hits(text: str) -> Iterator[Hit]:
    """Yield private keys, JWTs, credentialed URLs, auth headers and command-line passwords."""
    yield from _private_keys(text)
    yield from _jwts(text)
    yield from _url_credentials(text)
    yield from _auth_headers(text)
    yield from _command_lines(text)

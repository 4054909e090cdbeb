"""The no-credential guard: secret-named keys and secret values are refused on every write,
and neither the value nor any part of it reaches the error, the log or the audit table."""

from __future__ import annotations

import logging

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memdir.errors import SecretRefused
from memdir.state import State, key_is_secret

#: Secret key names as parts; the strategy joins them with any separator or in camel case.
SECRET_WORDS = [
    ("password",), ("passwd",), ("token",), ("secret",), ("api", "key"), ("apikey",),
    ("private", "key"), ("credential",), ("credentials",), ("auth",), ("pass", "word"),
    ("passwort",), ("kennwort",), ("contraseña",), ("mot", "de", "passe"), ("senha",),
    ("wachtwoord",), ("hasło",), ("пароль",), ("密码",), ("パスワード",), ("비밀번호",),
    ("access", "token"), ("client", "secret"), ("authorization",), ("auth", "token"),
    ("bearer",), ("secret", "key"),
]  # fmt: skip
HARMLESS = ["area", "owner", "author", "max_tokens", "tokens_used", "priority", "keyword",
            "session_name", "passage", "compass", "monkey", "url"]  # fmt: skip

#: Values in the style of the guard's corpus: vendor tokens and labelled secrets in prose of
#: several languages. Each holds the distinctive part "Zq7" so a leak can be searched for.
SECRET_VALUES = [
    "ghp_Zq7abcdefghijklmnopqrstuvwxyz0123456",
    "AKIAZQ7ABCDEFGHIJKLM",
    "my password: Zq7hunter2horse",
    "das Passwort lautet Zq7Sommer2024!",
    "la contraseña es Zq7Verano2024!",
    "le mot de passe est Zq7Ete2024!x",
    "пароль: Zq7Leto2024!x",
    "密码：Zq7xiatian2024",
    "postgres://admin:Zq7s3cretpw@db.example.com/app",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQZq7\n"
    "-----END PRIVATE KEY-----",
]


def _separated(draw: st.DrawFn) -> str:
    parts = list(draw(st.sampled_from(SECRET_WORDS)))
    style = draw(st.sampled_from(["lower", "upper", "camel", "title"]))
    if style == "upper":
        parts = [p.upper() for p in parts]
    elif style == "camel":
        parts = [parts[0], *(p.title() for p in parts[1:])]
    elif style == "title":
        parts = [p.title() for p in parts]
    sep = "" if style == "camel" else draw(st.sampled_from(["", "_", "-", ".", " ", "__"]))
    prefix = draw(st.sampled_from(["", "db_", "GITHUB_", "my-", "openai.", "X-"]))
    suffix = draw(st.sampled_from(["", "_value", "2", "-prod", "_file_name"]))
    return prefix + sep.join(parts) + suffix


secret_keys = st.composite(_separated)()


@given(key=secret_keys)
def test_secret_key_spellings_are_recognised(key: str) -> None:
    assert key_is_secret(key)


@pytest.mark.parametrize("key", HARMLESS)
def test_ordinary_keys_pass(key: str) -> None:
    assert not key_is_secret(key)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=secret_keys)
def test_a_secret_named_field_or_meta_key_is_refused(sqlite_state: State, key: str) -> None:
    with pytest.raises(SecretRefused) as refused:
        sqlite_state.add_task("t", fields={key: "Zq7harmless"})
    assert "Zq7" not in str(refused.value)
    with pytest.raises(SecretRefused):
        sqlite_state.set_meta(key, "Zq7harmless")
    with pytest.raises(SecretRefused):
        sqlite_state.record_session("a", fields={key: "x"})
    assert sqlite_state.audit() == []


@pytest.mark.parametrize("value", SECRET_VALUES)
def test_a_secret_value_is_refused_anywhere(
    state: State, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    goal = state.add_goal("ordinary")
    task = state.add_task("ordinary")
    attempts = [
        lambda: state.add_task(value),
        lambda: state.add_task("t", notes=value),
        lambda: state.add_task("t", fields={"area": value}),
        lambda: state.update_task(task.id, notes=value),
        lambda: state.update_goal(goal.id, fields={"area": value}),
        lambda: state.add_goal("g", notes=value),
        lambda: state.record_session("agent", value),
        lambda: state.set_meta("note", value),
    ]
    for attempt in attempts:
        with pytest.raises(SecretRefused) as refused:
            attempt()
        message = str(refused.value)
        assert "Zq7" not in message and value not in message
        assert "Zq7" not in repr(refused.value.findings)
    assert "Zq7" not in caplog.text
    assert len(state.audit()) == 2  # only the two ordinary writes
    assert "Zq7" not in repr(state.audit())
    assert "Zq7" not in repr(state.list_tasks(include_closed=True))
    assert state.get_task(task.id).notes == ""


def test_the_refusal_names_the_key_or_the_kind(sqlite_state: State) -> None:
    with pytest.raises(SecretRefused, match="'db_password'"):
        sqlite_state.add_task("t", fields={"db_password": "x"})
    with pytest.raises(SecretRefused, match="GitHub token"):
        sqlite_state.add_task("t", notes=SECRET_VALUES[0])


def test_the_database_file_never_holds_a_refused_value(sqlite_state: State) -> None:
    for value in SECRET_VALUES:
        with pytest.raises(SecretRefused):
            sqlite_state.add_task("t", notes=value)
    assert sqlite_state.path is not None
    sqlite_state.close()
    for path in sqlite_state.path.parent.iterdir():
        assert b"Zq7" not in path.read_bytes(), path


#: Key names that are credentials, or name one as people write them (issue 24, item 1).
CREDENTIAL_KEYS = [
    "ghp_Zq7abcdefghijklmnopqrstuvwxyz0123456",  # a token used as the name itself
    "AKIAZQ7ABCDEFGHIJKLM",
    "sk-proj-Zq7abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    "db_pass",
    "sessionid",
    "session_id",
    "PHPSESSID",
    "cookie",
    "p\u0430ssword",  # a Cyrillic а
    "t\u03bfken",  # a Greek ο
    "\u0440\u0430ssw\u043erd",  # Cyrillic р, а, о
]


@pytest.mark.parametrize("key", CREDENTIAL_KEYS)
def test_a_credential_as_a_key_name_is_refused_on_every_path_and_never_echoed(
    sqlite_state: State, key: str
) -> None:
    attempts = [
        lambda: sqlite_state.set_meta(key, "v"),
        lambda: sqlite_state.add_task("t", fields={key: "v"}),
        lambda: sqlite_state.add_goal("g", fields={key: "v"}),
        lambda: sqlite_state.record_session("agent", fields={key: "v"}),
    ]
    for attempt in attempts:
        with pytest.raises(SecretRefused) as refused:
            attempt()
        if "Zq7" in key:  # a credential itself: neither the message nor the findings hold it
            assert "Zq7" not in str(refused.value) and "Zq7" not in repr(refused.value.findings)
    assert sqlite_state.audit() == []
    assert (
        "Zq7" not in repr(sqlite_state.list_meta()) if hasattr(sqlite_state, "list_meta") else True
    )


def test_ordinary_keys_with_look_alike_letters_or_session_words_pass() -> None:
    for key in (
        "session_count",
        "sessions",
        "sidebar",
        "passenger",
        "bypass",
        "\u043f\u0440\u0438\u043e\u0440\u0438\u0442\u0435\u0442",
    ):
        assert not key_is_secret(key), key

"""Tests for `guard/values.py`: placeholders, randomness and password-likeness of a value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.guard.values import (
    access_code,
    class_count,
    diceware_phrase,
    is_placeholder,
    looks_random,
    password_like,
    plausible_password,
    recovery_code,
    shannon_entropy,
    switch_rate,
    wifi_key,
)


@pytest.mark.parametrize(
    "value", ["aaaa", "${DB_PASSWORD}", "<your-token>", "changeme", "DB_PASSWORD", "", "  "]
)
def test_placeholders_and_references_carry_no_secret(value: str) -> None:
    assert is_placeholder(value)
    assert not looks_random(value)


@pytest.mark.parametrize("value", ["Xq7-hunter-Plover-92", "hunter2", "k8Jd9qL2mZx4Vb7nR1tY"])
def test_real_looking_passwords(value: str) -> None:
    assert not is_placeholder(value)
    assert plausible_password(value)
    assert password_like(value)


def test_only_a_machine_made_token_looks_random() -> None:
    assert looks_random("k8Jd9qL2mZx4Vb7nR1tY")
    assert not looks_random("Xq7-hunter-Plover-92")
    assert not looks_random("correct horse")
    assert not password_like("/usr/local/bin")


def test_entropy_class_count_and_switch_rate() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("ab") == 1.0
    assert shannon_entropy("abcd") == 2.0
    assert class_count("abc") == 1
    assert class_count("aA1-") == 4
    assert switch_rate("a") == 0.0
    assert switch_rate("abc") == 0.0
    assert switch_rate("aA") == 1.0
    assert switch_rate("aA1") == 1.0


@given(st.text(max_size=64))
def test_measures_stay_in_their_ranges(value: str) -> None:
    assert 0.0 <= shannon_entropy(value) <= max(len(value), 1)
    assert 0 <= class_count(value) <= 4
    assert 0.0 <= switch_rate(value) <= 1.0


def test_a_typed_dotted_value_is_a_literal_not_an_attribute() -> None:
    assert not is_placeholder("Cielo.Kedi26")  # a capital and a digit: typed
    assert is_placeholder("self.pw2")  # an attribute in code
    assert not is_placeholder("self.pw2", literal=True)  # but quoted it is a string
    assert plausible_password("Cielo.Kedi26", literal=True)
    assert is_placeholder("settings.DB_PASSWORD", literal=True)


def test_passphrases_and_recovery_codes() -> None:
    assert diceware_phrase("tundra violet marble cactus")
    assert not diceware_phrase("see the vault entry")
    assert not diceware_phrase("Tundra Violet Marble Cactus")
    assert not diceware_phrase("tundra violet")
    assert recovery_code("01bb1-e2458")
    assert recovery_code("1234 5678")
    assert not recovery_code("xxxxx-xxxxx")
    assert not recovery_code("2024-0517")
    assert not recovery_code("abcdefgh")


def test_access_codes_are_short_digits_with_a_letter_or_capital_groups() -> None:
    for code in ("6182D", "4821", "GWSA-ZBHO", "7KQ2-19XA", "38-12-77"):
        assert access_code(code), code
    for word in ("TBD", "2FA", "v2", "abc1", "ABCD-EFGH", "XXXX-XXXX", "SEC-4821", "sha256"):
        assert not access_code(word), word


def test_a_wifi_key_is_not_a_network_name() -> None:
    assert wifi_key("itvDEpr%WgPv2")
    assert wifi_key("marmor#kolibri#komeet617")
    for name in ("Vodafone-4C2A", "HomeNet_5G", "FRITZ!Box", "eduroam", "TP-Link_5G_A1B2"):
        assert not wifi_key(name), name

"""§8.2's primitives and file format: known answers, every flipped bit, truncation, swaps."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)

from memdir.crypto import keys as keys_module
from memdir.crypto import seal as seal_module
from memdir.crypto.keys import (
    KDF_MEMLIMIT,
    KDF_OPSLIMIT,
    Keyring,
    derive_kek,
    format_recovery_key,
    parse_recovery_key,
    subkeys,
)
from memdir.crypto.seal import (
    FIRST_LINE,
    HEADER_BYTES,
    Kind,
    is_sealed,
    key_id_of,
    open_sealed,
    revision_of,
    seal,
    sealed_kind,
)
from memdir.errors import IntegrityError, InvalidInput, WrongPassword

# -- known answers ---------------------------------------------------------------------------

#: draft-irtf-cfrg-xchacha-03, appendix A.3.1.
_XC_KEY = bytes(range(0x80, 0xA0))
_XC_NONCE = bytes(range(0x40, 0x58))
_XC_AAD = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
_XC_PLAIN = (
    b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
    b"future, sunscreen would be it."
)
_XC_SEALED = bytes.fromhex(
    "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
    "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
    "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
    "21f9664c97637da9768812f615c68b13b52e"
    "c0875924c1c7987947deafd8780acf49"
)


def test_xchacha20_poly1305_matches_the_cfrg_vector() -> None:
    got = crypto_aead_xchacha20poly1305_ietf_encrypt(_XC_PLAIN, _XC_AAD, _XC_NONCE, _XC_KEY)
    assert got == _XC_SEALED
    assert crypto_aead_xchacha20poly1305_ietf_decrypt(got, _XC_AAD, _XC_NONCE, _XC_KEY) == _XC_PLAIN


@pytest.mark.parametrize(
    ("ops", "mem", "expected"),
    [
        # The reference implementation: `echo -n 123 | argon2 ABCDEFGHIJKLMNOP -id -v 13 -k K -t T`
        (5, 1024 * 1024, "3c5d010180ba0cf5b6b858cba23b318e42d33088983c404598599c3b029ecac6"),
        (2, 8 * 1024 * 1024, "3ee950488d26ce691657b1d753f562139857b61a58f234d6cb0ce84c4cc27328"),
    ],
)
def test_argon2id_matches_the_reference_implementation(ops: int, mem: int, expected: str) -> None:
    assert derive_kek(b"123", b"ABCDEFGHIJKLMNOP", opslimit=ops, memlimit=mem).hex() == expected


def test_the_keyring_uses_the_specified_argon2id_parameters() -> None:
    assert (KDF_OPSLIMIT, KDF_MEMLIMIT) == (3, 64 * 1024 * 1024)
    ring, _master, _recovery = Keyring.create(b"correct horse", 0)
    doc = json.loads(ring.to_json())
    assert doc["password"]["kdf"] == "argon2id13"
    assert doc["password"]["opslimit"] == 3 and doc["password"]["memlimit"] == 64 << 20
    assert len(base64.b64decode(doc["password"]["salt"])) == 16


def _fixed_nonce(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seal_module.secrets, "token_bytes", lambda n: _XC_NONCE[:n])


#: A sealed note of format version 1 (master key 00..1f, the fixed nonce above): files
#: written today must open for as long as version 1 is read.
_MASTER = bytes(range(32))
_GOLDEN_PLAIN = b'---\n{"id": "golden"}\n---\nThe blue cluster runs CI.\n'


def test_seal_is_the_aead_over_header_and_context(monkeypatch: pytest.MonkeyPatch) -> None:
    _fixed_nonce(monkeypatch)
    keys = subkeys(_MASTER)
    sealed = seal(keys, _GOLDEN_PLAIN, kind=Kind.NOTE, context="golden")
    first, _, body = sealed.partition(b"\n")
    assert first.startswith(FIRST_LINE) and b"note" in first
    frame = base64.b64decode(b"".join(body.split()))
    header = frame[:HEADER_BYTES]
    assert header[:4] == b"MDSL" and header[4] == 1 and header[5] == Kind.NOTE
    assert header[6:14] == keys.key_id
    assert header[14:30] == keys.revision_tag(revision_of(_GOLDEN_PLAIN))
    assert header[30:54] == _XC_NONCE
    expected = crypto_aead_xchacha20poly1305_ietf_encrypt(
        _GOLDEN_PLAIN, header + b"\x00golden", _XC_NONCE, keys.seal
    )
    assert frame[HEADER_BYTES:] == expected
    assert all(len(line) <= 76 for line in body.split(b"\n"))


#: Written by this code once, kept as it was: version 1 files must open for as long as
#: version 1 is read (a change of the format or of the subkeys fails this on purpose).
_GOLDEN = (
    b"memdir-sealed 1 note: encrypted by memdir; `memdir unlock` reads it\n"
    b"TURTTAEBW26q8+R/58g597sI2PB+D5e8/1gDY+DCQEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXkUSf\n"
    b"YEDPrNohUsVQt3uFuTgC3nSaBMHvfd7+Y2sZ2ZihymcS55819zCFRIjkb9V/cxOrILJqyDzk+REh\n"
    b"/0w7JcgJCA==\n"
)


def test_a_version_1_file_written_earlier_still_opens() -> None:
    opened = open_sealed(subkeys(_MASTER), _GOLDEN, kind=Kind.NOTE, context="golden")
    assert opened.data == _GOLDEN_PLAIN
    assert opened.revision == revision_of(_GOLDEN_PLAIN)


def test_subkeys_are_distinct_and_named_by_a_key_id() -> None:
    keys = subkeys(_MASTER)
    assert len({keys.seal, keys.tag, _MASTER}) == 3
    assert len(keys.key_id) == 8
    assert subkeys(bytes(32)).key_id != keys.key_id
    assert "seal" not in repr(keys) and _MASTER.hex() not in repr(keys)
    with pytest.raises(InvalidInput):
        subkeys(b"short")


# -- tampering -------------------------------------------------------------------------------


def _sealed(data: bytes = _GOLDEN_PLAIN, kind: Kind = Kind.NOTE, context: str = "golden") -> bytes:
    return seal(subkeys(_MASTER), data, kind=kind, context=context)


def _reframe(sealed: bytes, frame: bytes) -> bytes:
    first = sealed.split(b"\n", 1)[0]
    return first + b"\n" + base64.b64encode(frame) + b"\n"


def test_a_flipped_bit_anywhere_in_the_frame_fails_to_open() -> None:
    keys = subkeys(_MASTER)
    sealed = _sealed()
    frame = base64.b64decode(b"".join(sealed.split(b"\n", 1)[1].split()))
    parts = {"magic": 0, "version": 4, "kind": 5, "key id": 6, "revision tag": 14, "nonce": 30}
    for index in range(len(frame)):
        for bit in (0, 7):
            bad = bytearray(frame)
            bad[index] ^= 1 << bit
            with pytest.raises(IntegrityError):
                open_sealed(keys, _reframe(sealed, bytes(bad)), kind=Kind.NOTE, context="golden")
    assert set(parts.values()) <= set(range(len(frame)))  # every header part was covered


def test_a_damaged_first_line_or_body_is_refused() -> None:
    keys = subkeys(_MASTER)
    sealed = _sealed()
    for bad in (
        b"memdir-sealed 2 " + sealed[len(FIRST_LINE) :],  # not the first line of version 1
        sealed.replace(b"\n", b"\n!", 1),  # not base64
        sealed[:-30] + b"\n",  # cut short
        FIRST_LINE + b"note\n",  # nothing after the line
        b"plain text",
    ):
        with pytest.raises(IntegrityError):
            open_sealed(keys, bad, kind=Kind.NOTE, context="golden")


def test_every_truncation_fails_to_open() -> None:
    keys = subkeys(_MASTER)
    sealed = _sealed()
    frame = base64.b64decode(b"".join(sealed.split(b"\n", 1)[1].split()))
    for cut in range(len(frame)):
        with pytest.raises(IntegrityError):
            open_sealed(keys, _reframe(sealed, frame[:cut]), kind=Kind.NOTE, context="golden")


def test_a_ciphertext_swapped_between_notes_kinds_revisions_or_keys_fails() -> None:
    keys = subkeys(_MASTER)
    sealed = _sealed()
    with pytest.raises(IntegrityError, match="does not open"):
        open_sealed(keys, sealed, kind=Kind.NOTE, context="other-note")
    with pytest.raises(IntegrityError, match="not a sealed"):
        open_sealed(keys, sealed, kind=Kind.OBJECT, context="golden")
    older = b'---\n{"id": "golden"}\n---\nAn older version.\n'
    object_file = _sealed(older, Kind.OBJECT, revision_of(older))
    with pytest.raises(IntegrityError, match="swapped"):
        open_sealed(
            keys,
            object_file,
            kind=Kind.OBJECT,
            context=revision_of(older),
            revision=revision_of(_GOLDEN_PLAIN),
        )
    with pytest.raises(IntegrityError, match="another key"):
        open_sealed(subkeys(bytes(32)), sealed, kind=Kind.NOTE, context="golden")


def test_the_helpers_read_the_header_without_a_key() -> None:
    sealed = _sealed(kind=Kind.BACKUP)
    assert is_sealed(sealed) and not is_sealed(b"---\n")
    assert sealed_kind(sealed) == Kind.BACKUP and sealed_kind(b"x") is None
    assert key_id_of(sealed) == subkeys(_MASTER).key_id and key_id_of(b"x") is None


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=4096),
    context=st.text(min_size=1, max_size=80).filter(lambda t: "\x00" not in t),
    kind=st.sampled_from(list(Kind)),
)
def test_seal_then_open_gives_the_bytes_back(data: bytes, context: str, kind: Kind) -> None:
    keys = subkeys(_MASTER)
    sealed = seal(keys, data, kind=kind, context=context)
    assert sealed.decode("ascii")  # text: git, diff and the sync protocol carry it
    opened = open_sealed(keys, sealed, kind=kind, context=context, revision=revision_of(data))
    assert opened.data == data and opened.revision == revision_of(data)
    assert seal(keys, data, kind=kind, context=context) != sealed  # a fresh nonce each time


# -- the keyring -----------------------------------------------------------------------------


def test_the_keyring_opens_with_its_password_or_recovery_key_only() -> None:
    ring, master, recovery = Keyring.create(b"correct horse", 1234)
    assert recovery.startswith("MDRK-") and len(recovery.split("-")) == 14
    again = Keyring.from_json(ring.to_json())
    assert again == ring and again.created_ms == 1234
    assert again.open_with_password(b"correct horse") == master
    assert again.open_with_recovery(recovery.lower().replace("-", " ")) == master
    with pytest.raises(WrongPassword):
        again.open_with_password(b"correct horsf")
    with pytest.raises(WrongPassword):
        again.open_with_recovery(format_recovery_key(bytes(32)))
    with pytest.raises(WrongPassword):
        again.open_with_recovery("MDRK-not-a-key")
    text = ring.to_json().decode()
    assert master.hex() not in text and "correct horse" not in text
    assert base64.b64encode(master).decode() not in text


def test_a_new_password_wraps_the_same_master_key() -> None:
    ring, master, recovery = Keyring.create(b"old password", 0)
    changed = ring.with_password(master, b"new password")
    assert changed.salt != ring.salt and changed.key_id == ring.key_id
    assert changed.open_with_password(b"new password") == master
    assert changed.open_with_recovery(recovery) == master
    with pytest.raises(WrongPassword):
        changed.open_with_password(b"old password")
    with pytest.raises(WrongPassword):
        ring.with_password(bytes(32), b"x")


def test_a_tampered_keyring_is_refused_or_does_not_open() -> None:
    ring, _master, _ = Keyring.create(b"pw", 0)
    doc = json.loads(ring.to_json())
    cases: list[object] = [b"{", b"[]", b'{"format": "x"}']
    for path, value in (
        (("version",), 2),
        (("password", "kdf"), "scrypt"),
        (("password", "opslimit"), 0),
        (("password", "memlimit"), 1),
        (("password", "salt"), "AAAA"),
        (("password", "wrapped"), "!!"),
        (("keyId",), "zz"),
    ):
        bad = json.loads(json.dumps(doc))
        target = bad
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        cases.append(json.dumps(bad).encode())
    for data in cases:
        assert isinstance(data, bytes)
        try:
            parsed = Keyring.from_json(data)
        except IntegrityError:
            continue
        with pytest.raises((WrongPassword, IntegrityError)):
            parsed.open_with_password(b"pw")


def test_a_tampered_recovery_slot_does_not_open_but_leaves_the_password() -> None:
    ring, master, recovery = Keyring.create(b"pw", 0)
    doc = json.loads(ring.to_json())
    doc["recovery"]["wrapped"] = base64.b64encode(b"x" * 72).decode()
    tampered = Keyring.from_json(json.dumps(doc).encode())
    with pytest.raises(WrongPassword):
        tampered.open_with_recovery(recovery)
    assert tampered.open_with_password(b"pw") == master


def test_a_swapped_wrapped_key_does_not_open() -> None:
    one, _m1, _ = Keyring.create(b"pw", 0)
    two, _m2, _ = Keyring.create(b"pw", 0)
    doc = json.loads(one.to_json())
    doc["password"]["wrapped"] = json.loads(two.to_json())["password"]["wrapped"]
    doc["password"]["salt"] = json.loads(two.to_json())["password"]["salt"]
    with pytest.raises(WrongPassword):
        Keyring.from_json(json.dumps(doc).encode()).open_with_password(b"pw")


def test_recovery_keys_round_trip() -> None:
    for raw in (bytes(32), bytes(range(32)), b"\xff" * 32):
        assert parse_recovery_key(format_recovery_key(raw)) == raw
    assert keys_module.MAX_PASSWORD_BYTES >= 1024
    with pytest.raises(InvalidInput):
        keys_module.check_password(b"")

"""Encryption at rest (§8.2): sealing, the keyring, and the unlock agent.

- `memdir.crypto.seal`: the sealed-file format (XChaCha20-Poly1305, a versioned header,
  associated data binding what a file is, its note id and revision);
- `memdir.crypto.keys`: Argon2id key derivation, the keyring (a random master key wrapped
  by the password's key and by a recovery key), subkeys;
- `memdir.crypto.agent`: the per-user unlock agent (like ssh-agent) holding master keys and
  in-memory index images over a 0600 Unix socket until 15 minutes of inactivity.

Nothing here touches note files or knows of stores: `memdir.store` seals and opens.
"""

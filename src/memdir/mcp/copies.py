"""Where the remote MCP endpoint keeps its working copies (§12), without loading the SDK:
`memdir server erase` removes an account's copies too, and the server sweeps at start the
copies of accounts it no longer has.

`DATA/working-copies/<digest of the account>/<digest of account, project, team>/`: no
name reaches a path, and one account's copies are one directory.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["WORKING_COPIES", "account_directory", "digest", "forget_account", "sweep"]

#: The working copies' directory under the server's data directory.
WORKING_COPIES = "working-copies"


def digest(text: str) -> str:
    """A directory name for `text`."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def account_directory(root: Path, account: str) -> Path:
    """Where the working copies of `account` are, under `root`."""
    return root / digest(account)


def forget_account(root: Path, account: str) -> None:
    """Remove every working copy of `account` under `root` (none may outlive its erasure)."""
    shutil.rmtree(account_directory(root, account), ignore_errors=True)


def sweep(root: Path, accounts: Iterable[str], erased: Callable[[str], bool]) -> int:
    """Remove the copies of every account not in `accounts`, or `erased`; how many
    accounts' copies went. Only the accounts that have copies here are asked about."""
    present = {entry.name: entry for entry in root.iterdir()} if root.is_dir() else {}
    live = {digest(a): a for a in accounts}
    gone = 0
    for name, entry in present.items():
        account = live.get(name)
        if account is None or erased(account):
            shutil.rmtree(entry, ignore_errors=True)
            gone += 1
    return gone

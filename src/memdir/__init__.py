"""memdir: long-term memory for AI agents and the people who work with them.

The public names are imported on first use (PEP 562): `import memdir` and
`from memdir import __version__` stay cheap, and `from memdir import Memory` imports
only what `Memory` needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from memdir._version import __version__

if TYPE_CHECKING:
    from memdir.core import Note, NoteType, Scope
    from memdir.embed import Embedder, EmbedderInfo, EmbedderUnavailable, EmbeddingFailed
    from memdir.errors import (
        Busy,
        ConfigError,
        Conflict,
        IncompatibleVersion,
        IntegrityError,
        InvalidInput,
        LimitExceeded,
        MemdirError,
        NotFound,
        ParseError,
        RateLimited,
        Refused,
        SecretRefused,
        SyncFailed,
        SyncRefused,
    )
    from memdir.extract import ExtractionResult, ExtractionState
    from memdir.memory import Memory
    from memdir.results import (
        DoctorReport,
        ForgetPlan,
        ForgetResult,
        HistoryEntry,
        Link,
        LinkReport,
        RestoreResult,
        WriteResult,
    )
    from memdir.retrieve import Chunk, Hit, Neighbour, ReindexStats
    from memdir.retrieve.recall import Recall
    from memdir.store import BackupRecord
    from memdir.sync.batch import BatchResult
    from memdir.sync.replica import ConflictView, Resolution, SyncRun, SyncStatus
    from memdir.sync.scope_pass import PassReport

__all__ = [
    "BackupRecord",
    "BatchResult",
    "Busy",
    "Chunk",
    "ConfigError",
    "Conflict",
    "ConflictView",
    "DoctorReport",
    "Embedder",
    "EmbedderInfo",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "ExtractionResult",
    "ExtractionState",
    "ForgetPlan",
    "ForgetResult",
    "HistoryEntry",
    "Hit",
    "IncompatibleVersion",
    "IntegrityError",
    "InvalidInput",
    "LimitExceeded",
    "Link",
    "LinkReport",
    "MemdirError",
    "Memory",
    "Neighbour",
    "NotFound",
    "Note",
    "NoteType",
    "ParseError",
    "PassReport",
    "RateLimited",
    "Recall",
    "Refused",
    "ReindexStats",
    "Resolution",
    "RestoreResult",
    "Scope",
    "SecretRefused",
    "SyncFailed",
    "SyncRefused",
    "SyncRun",
    "SyncStatus",
    "WriteResult",
    "__version__",
]

#: Where each public name is defined (a test keeps it equal to the block above).
_EXPORTS: dict[str, str] = {
    "BackupRecord": "memdir.store",
    "BatchResult": "memdir.sync.batch",
    "Busy": "memdir.errors",
    "Chunk": "memdir.retrieve",
    "ConfigError": "memdir.errors",
    "Conflict": "memdir.errors",
    "ConflictView": "memdir.sync.replica",
    "DoctorReport": "memdir.results",
    "Embedder": "memdir.embed",
    "EmbedderInfo": "memdir.embed",
    "EmbedderUnavailable": "memdir.embed",
    "EmbeddingFailed": "memdir.embed",
    "ExtractionResult": "memdir.extract",
    "ExtractionState": "memdir.extract",
    "ForgetPlan": "memdir.results",
    "ForgetResult": "memdir.results",
    "HistoryEntry": "memdir.results",
    "Hit": "memdir.retrieve",
    "IncompatibleVersion": "memdir.errors",
    "IntegrityError": "memdir.errors",
    "InvalidInput": "memdir.errors",
    "LimitExceeded": "memdir.errors",
    "Link": "memdir.results",
    "LinkReport": "memdir.results",
    "MemdirError": "memdir.errors",
    "Memory": "memdir.memory",
    "Neighbour": "memdir.retrieve",
    "NotFound": "memdir.errors",
    "Note": "memdir.core",
    "NoteType": "memdir.core",
    "ParseError": "memdir.errors",
    "PassReport": "memdir.sync.scope_pass",
    "RateLimited": "memdir.errors",
    "Recall": "memdir.retrieve.recall",
    "Refused": "memdir.errors",
    "ReindexStats": "memdir.retrieve",
    "Resolution": "memdir.sync.replica",
    "RestoreResult": "memdir.results",
    "Scope": "memdir.core",
    "SecretRefused": "memdir.errors",
    "SyncFailed": "memdir.errors",
    "SyncRefused": "memdir.errors",
    "SyncRun": "memdir.sync.replica",
    "SyncStatus": "memdir.sync.replica",
    "WriteResult": "memdir.results",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    """The loaded names and every public one."""
    return sorted(set(globals()) | set(__all__))

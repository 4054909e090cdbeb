"""memdir: long-term memory for AI agents and the people who work with them.

The public names are imported on first use (PEP 562): `import memdir` and
`from memdir import __version__` stay cheap, and `from memdir import Memory` imports
only what `Memory` needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memdir._lazy import lazy_names
from memdir._version import __version__

if TYPE_CHECKING:
    from memdir.core import Note, NoteType, Scope
    from memdir.embed import Embedder, EmbedderInfo, EmbedderUnavailable, EmbeddingFailed
    from memdir.errors import (
        Busy,
        ConfigError,
        Conflict,
        DiskError,
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
        AuditHead,
        AuditVerification,
        BackupRecord,
        BatchResult,
        Chunk,
        ConflictView,
        DoctorReport,
        ForgetPlan,
        ForgetResult,
        HistoryEntry,
        Hit,
        Link,
        LinkReport,
        Neighbour,
        PassReport,
        Recall,
        ReindexStats,
        Resolution,
        RestoreResult,
        SyncRun,
        SyncStatus,
        WriteResult,
    )

__all__ = [
    "AuditHead",
    "AuditVerification",
    "BackupRecord",
    "BatchResult",
    "Busy",
    "Chunk",
    "ConfigError",
    "Conflict",
    "ConflictView",
    "DiskError",
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
    "AuditHead": "memdir.results",
    "AuditVerification": "memdir.results",
    "BackupRecord": "memdir.results",
    "BatchResult": "memdir.results",
    "Busy": "memdir.errors",
    "Chunk": "memdir.results",
    "ConfigError": "memdir.errors",
    "Conflict": "memdir.errors",
    "ConflictView": "memdir.results",
    "DiskError": "memdir.errors",
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
    "Hit": "memdir.results",
    "IncompatibleVersion": "memdir.errors",
    "IntegrityError": "memdir.errors",
    "InvalidInput": "memdir.errors",
    "LimitExceeded": "memdir.errors",
    "Link": "memdir.results",
    "LinkReport": "memdir.results",
    "MemdirError": "memdir.errors",
    "Memory": "memdir.memory",
    "Neighbour": "memdir.results",
    "NotFound": "memdir.errors",
    "Note": "memdir.core",
    "NoteType": "memdir.core",
    "ParseError": "memdir.errors",
    "PassReport": "memdir.results",
    "RateLimited": "memdir.errors",
    "Recall": "memdir.results",
    "Refused": "memdir.errors",
    "ReindexStats": "memdir.results",
    "Resolution": "memdir.results",
    "RestoreResult": "memdir.results",
    "Scope": "memdir.core",
    "SecretRefused": "memdir.errors",
    "SyncFailed": "memdir.errors",
    "SyncRefused": "memdir.errors",
    "SyncRun": "memdir.results",
    "SyncStatus": "memdir.results",
    "WriteResult": "memdir.results",
}


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__)

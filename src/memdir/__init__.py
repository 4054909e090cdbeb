"""memdir: long-term memory for AI agents and the people who work with them.

The public names are imported on first use (PEP 562): `import memdir` and
`from memdir import __version__` stay cheap, and `from memdir import Memory` imports
only what `Memory` needs.
"""

from __future__ import annotations

from memdir._lazy import lazy_names
from memdir._version import __version__

#: `typing.TYPE_CHECKING` without importing typing (a hook's process imports memdir and
#: little else; type checkers read this name by name).
TYPE_CHECKING = False

if TYPE_CHECKING:
    from memdir.answer.check import Answer, AnswerStatus, Citation, Claim
    from memdir.core import Note, NoteType, Scope
    from memdir.core.links import Link, LinkReport
    from memdir.core.merging import MergeDraft
    from memdir.core.vocab import FindingKind
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
        Locked,
        MemdirError,
        NotFound,
        ParseError,
        RateLimited,
        Refused,
        SecretRefused,
        SyncFailed,
        SyncRefused,
        WrongPassword,
    )
    from memdir.extract import ExtractionResult, ExtractionState
    from memdir.memory import Memory
    from memdir.memory.backups import RestoreResult
    from memdir.memory.consolidating import ConsolidationReport
    from memdir.memory.encryption import EncryptionStatus, EncryptReport, ScopeEncryption
    from memdir.memory.exporting import ExportReport
    from memdir.memory.importing import ImportIssue, ImportReport
    from memdir.memory.maintenance import DoctorReport, ForgetPlan, ForgetResult
    from memdir.memory.tidying import DismissResult
    from memdir.retrieve.hits import Chunk, Hit, ReindexStats
    from memdir.retrieve.recall import Recall
    from memdir.state import State
    from memdir.store.audit import AuditVerification
    from memdir.store.backups import BackupRecord
    from memdir.store.notes import (
        CurrentNote,
        HistoryEntry,
        Neighbour,
        SupersedeResult,
        WriteResult,
    )
    from memdir.store.signing import AuditHead
    from memdir.sync.batch import BatchResult
    from memdir.sync.comparison import PassReport
    from memdir.sync.replica import ConflictView, Resolution, ScopeStatus, SyncRun, SyncStatus
    from memdir.tidy.findings import Finding
    from memdir.tidy.merge import MergePlan, MergeResult


__all__ = [
    "Answer",
    "AnswerStatus",
    "AuditHead",
    "AuditVerification",
    "BackupRecord",
    "BatchResult",
    "Busy",
    "Chunk",
    "Citation",
    "Claim",
    "ConfigError",
    "Conflict",
    "ConflictView",
    "ConsolidationReport",
    "CurrentNote",
    "DiskError",
    "DismissResult",
    "DoctorReport",
    "Embedder",
    "EmbedderInfo",
    "EmbedderUnavailable",
    "EmbeddingFailed",
    "EncryptReport",
    "EncryptionStatus",
    "ExportReport",
    "ExtractionResult",
    "ExtractionState",
    "Finding",
    "FindingKind",
    "ForgetPlan",
    "ForgetResult",
    "HistoryEntry",
    "Hit",
    "ImportIssue",
    "ImportReport",
    "IncompatibleVersion",
    "IntegrityError",
    "InvalidInput",
    "LimitExceeded",
    "Link",
    "LinkReport",
    "Locked",
    "MemdirError",
    "Memory",
    "MergeDraft",
    "MergePlan",
    "MergeResult",
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
    "ScopeEncryption",
    "ScopeStatus",
    "SecretRefused",
    "State",
    "SupersedeResult",
    "SyncFailed",
    "SyncRefused",
    "SyncRun",
    "SyncStatus",
    "WriteResult",
    "WrongPassword",
    "__version__",
]

#: Where each public name is defined (a test keeps it equal to the block above).
_EXPORTS: dict[str, str] = {
    "Answer": "memdir.answer.check",
    "AnswerStatus": "memdir.answer.check",
    "AuditHead": "memdir.store.signing",
    "AuditVerification": "memdir.store.audit",
    "BackupRecord": "memdir.store.backups",
    "BatchResult": "memdir.sync.batch",
    "Busy": "memdir.errors",
    "Chunk": "memdir.retrieve.hits",
    "Citation": "memdir.answer.check",
    "Claim": "memdir.answer.check",
    "ConfigError": "memdir.errors",
    "Conflict": "memdir.errors",
    "ConflictView": "memdir.sync.replica",
    "ConsolidationReport": "memdir.memory.consolidating",
    "CurrentNote": "memdir.store.notes",
    "DiskError": "memdir.errors",
    "DismissResult": "memdir.memory.tidying",
    "DoctorReport": "memdir.memory.maintenance",
    "Embedder": "memdir.embed",
    "EmbedderInfo": "memdir.embed",
    "EmbedderUnavailable": "memdir.embed",
    "EmbeddingFailed": "memdir.embed",
    "EncryptReport": "memdir.memory.encryption",
    "EncryptionStatus": "memdir.memory.encryption",
    "ExportReport": "memdir.memory.exporting",
    "ExtractionResult": "memdir.extract",
    "ExtractionState": "memdir.extract",
    "Finding": "memdir.tidy.findings",
    "FindingKind": "memdir.core.vocab",
    "ForgetPlan": "memdir.memory.maintenance",
    "ForgetResult": "memdir.memory.maintenance",
    "HistoryEntry": "memdir.store.notes",
    "Hit": "memdir.retrieve.hits",
    "ImportIssue": "memdir.memory.importing",
    "ImportReport": "memdir.memory.importing",
    "IncompatibleVersion": "memdir.errors",
    "IntegrityError": "memdir.errors",
    "InvalidInput": "memdir.errors",
    "LimitExceeded": "memdir.errors",
    "Link": "memdir.core.links",
    "LinkReport": "memdir.core.links",
    "Locked": "memdir.errors",
    "MemdirError": "memdir.errors",
    "Memory": "memdir.memory",
    "MergeDraft": "memdir.core.merging",
    "MergePlan": "memdir.tidy.merge",
    "MergeResult": "memdir.tidy.merge",
    "Neighbour": "memdir.store.notes",
    "NotFound": "memdir.errors",
    "Note": "memdir.core",
    "NoteType": "memdir.core",
    "ParseError": "memdir.errors",
    "PassReport": "memdir.sync.comparison",
    "RateLimited": "memdir.errors",
    "Recall": "memdir.retrieve.recall",
    "Refused": "memdir.errors",
    "ReindexStats": "memdir.retrieve.hits",
    "Resolution": "memdir.sync.replica",
    "RestoreResult": "memdir.memory.backups",
    "Scope": "memdir.core",
    "ScopeEncryption": "memdir.memory.encryption",
    "ScopeStatus": "memdir.sync.replica",
    "SecretRefused": "memdir.errors",
    "State": "memdir.state",
    "SupersedeResult": "memdir.store.notes",
    "SyncFailed": "memdir.errors",
    "SyncRefused": "memdir.errors",
    "SyncRun": "memdir.sync.replica",
    "SyncStatus": "memdir.sync.replica",
    "WriteResult": "memdir.store.notes",
    "WrongPassword": "memdir.errors",
}


__getattr__, __dir__ = lazy_names(__name__, _EXPORTS, __all__)

"""memdir: long-term memory for AI agents and the people who work with them."""

from memdir._version import __version__
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
from memdir.sync.engine import PassReport
from memdir.sync.service import ConflictView, Resolution, SyncRun, SyncStatus

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

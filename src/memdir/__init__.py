"""memdir: long-term memory for AI agents and the people who work with them."""

from memdir._version import __version__
from memdir.core import Note, NoteType, Scope
from memdir.embed import Embedder, EmbedderInfo, EmbedderUnavailable, EmbeddingFailed
from memdir.errors import (
    Busy,
    ConfigError,
    Conflict,
    IntegrityError,
    InvalidInput,
    LimitExceeded,
    MemdirError,
    NotFound,
    ParseError,
    Refused,
    SecretRefused,
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

__all__ = [
    "BackupRecord",
    "Busy",
    "Chunk",
    "ConfigError",
    "Conflict",
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
    "Recall",
    "Refused",
    "ReindexStats",
    "RestoreResult",
    "Scope",
    "SecretRefused",
    "WriteResult",
    "__version__",
]

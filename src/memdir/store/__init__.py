"""Canonical state: note directories, atomic writes, locks, history, backups, audit log."""

from memdir.store.audit import AuditEntry, AuditLog, AuditReport
from memdir.store.backups import BackupRecord, Backups
from memdir.store.history import History, Revision, revision_of
from memdir.store.notedir import NoteDirectory, Scan
from memdir.store.notes import SaveOutcome, ScopeStore, check_secrets
from memdir.store.problems import FileProblem
from memdir.store.usage import UsageStats

__all__ = [
    "AuditEntry",
    "AuditLog",
    "AuditReport",
    "BackupRecord",
    "Backups",
    "FileProblem",
    "History",
    "NoteDirectory",
    "Revision",
    "SaveOutcome",
    "Scan",
    "ScopeStore",
    "UsageStats",
    "check_secrets",
    "revision_of",
]

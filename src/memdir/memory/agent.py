"""What an agent is shown unasked (§4): the prompt index and per-message recall, over the
notes no sync conflict holds back."""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from memdir.config import Settings
from memdir.core import Note, Scope
from memdir.memory.stores import Stores
from memdir.store import UsageStats

if TYPE_CHECKING:
    from memdir.retrieve import Recall, Recaller

__all__ = ["AgentView"]

_recall_log = logging.getLogger("memdir.recall")


class AgentView:
    """The prompt index and recall: the notes an agent sees without asking."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        usage: UsageStats,
        *,
        held: Callable[[], set[tuple[Scope, str]]],
    ) -> None:
        self.settings = settings
        self.stores = stores
        self.usage = usage
        self._held = held
        self._recaller: Recaller | None = None

    def notes(self) -> builtins.list[Note]:
        """Notes an agent may be shown unasked: not those held back by a sync conflict (§3)."""
        held = self._held()
        notes = self.stores.all_notes()
        return [n for n in notes if (n.scope, n.id) not in held] if held else notes

    def prompt_index(self) -> str:
        """§4.1: one line per note, newest first, within `memory.indexChars`; rest counted."""
        from memdir.retrieve import prompt_index

        return prompt_index(self.notes(), self.settings.index_chars)

    def recall(
        self, message: str, history: Sequence[Mapping[str, Any]], *, is_subagent: bool
    ) -> Recall:
        """§4.2: the notes to attach to a user message; never raises (failures are logged)."""
        from memdir.retrieve import Recall, Recaller, recalled_ids

        if is_subagent or not self.settings.recall.enabled:
            return Recall()
        try:
            notes = self.notes()
            if self._recaller is None:
                self._recaller = Recaller()
            found = self._recaller.recall(
                message, notes, self.settings.recall, exclude=recalled_ids(history)
            )
        except Exception:
            _recall_log.exception("recall failed; the message goes on without recalled notes")
            return Recall()
        if not found.count:
            return found
        attached = [n for n in notes if n.id in found.note_ids]
        for store in self.stores.chosen(None):
            ids = [n.id for n in attached if n.scope is store.scope]
            try:
                self.usage.record(store.state_key, ids)
            except OSError as exc:  # a full or read-only disk: recall goes on, unrecorded
                _recall_log.warning("cannot record recall statistics: %s", exc.strerror or exc)
            except Exception:
                _recall_log.warning("cannot record recall statistics", exc_info=True)
        return found

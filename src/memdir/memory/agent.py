"""`Memory.agent` (§4): what an agent is shown unasked (the prompt index and per-message
recall, over the notes no sync conflict holds back), what it writes by itself
(extraction) and the guidance that tells it when a note is worth writing."""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memdir.config import Settings
from memdir.core import Note, Scope
from memdir.errors import Locked
from memdir.guidance import GUIDANCE
from memdir.memory.stores import Stores
from memdir.store import UsageStats

if TYPE_CHECKING:
    from memdir.extract import ChatClient, ExtractionResult, ExtractionState, Reason
    from memdir.extract.host import ExtractHost
    from memdir.index.stored import StoredTerms
    from memdir.retrieve import Hit, Recall, Recaller

__all__ = ["AgentView"]

_recall_log = logging.getLogger("memdir.recall")
#: Warm recall attaches notes scoring within this of the best hit (fitted with
#: bench/economy.py on the LoCoMo development set).
WARM_MARGIN = 0.03
#: Characters of a message the warm path searches with (the embedder reads ~512 tokens).
WARM_QUERY_CHARS = 2000


class AgentView:
    """The prompt index and recall: the notes an agent sees without asking."""

    def __init__(
        self,
        settings: Settings,
        stores: Stores,
        usage: UsageStats,
        *,
        held: Callable[[], set[tuple[Scope, str]]],
        home: Path,
        host: ExtractHost,
        chat: ChatClient | None = None,
        warm_search: Callable[[str, int], builtins.list[Hit] | None] | None = None,
    ) -> None:
        self.settings = settings
        self._host = host
        self._chat = chat
        self.home = home  # where the search indexes live (memdir.index.schema.index_file)
        self._first = threading.Lock()
        self.stores = stores
        self.usage = usage
        self._held = held
        self._recaller: Recaller | None = None
        #: A hybrid search when the host's vectors are warm (`Index.warm_search`).
        self._warm_search = warm_search

    def notes(self) -> builtins.list[Note]:
        """Notes an agent may be shown unasked: not those held back by a sync conflict (§3)."""
        held = self._held()
        notes = self.stores.all_notes()
        return [n for n in notes if (n.scope, n.id) not in held] if held else notes

    def _stored(
        self,
    ) -> tuple[list[StoredTerms], list[Note], Callable[[Scope | None, str], Note | None]] | None:
        """For a first recall in an unwatched process: the notes whose files are as the
        index holds them, by their stored terms, and the others read from their files;
        None when the notes must all be read (a watched host keeps them in memory, a scope
        above maxNotes or without a usable index)."""
        from memdir.index.stored import stored_terms

        held = self._held()
        stored: list[StoredTerms] = []
        read: list[Note] = []
        for store in self.stores.chosen(None):
            if store.directory.watched:
                return None
            stamps, over = store.directory.stamps()
            if over:
                return None
            got = stored_terms(self.home, store.state_key, store.scope, stamps)
            if got is None:
                return None
            stored += [t for t in got[0] if (store.scope, t.note_id) not in held]
            for note_id in sorted(got[1]):
                item = store.directory.read(note_id)
                if isinstance(item, Note) and (store.scope, note_id) not in held:
                    read.append(item)

        def load(scope: Scope | None, note_id: str) -> Note | None:
            store = self.stores.by_scope.get(scope) if scope is not None else None
            if store is None or (scope, note_id) in held:
                return None
            try:
                item = store.directory.read(note_id)
            except OSError:
                return None
            return item if isinstance(item, Note) else None

        return stored, read, load

    def prompt_index(self) -> str:
        """§4.1: one line per note, newest first, within `memory.indexChars`; rest counted."""
        from memdir.retrieve import prompt_index

        return prompt_index(self.notes(), self.settings.index_chars)

    def recall(
        self,
        message: str,
        history: Sequence[Mapping[str, Any]] = (),
        *,
        is_subagent: bool = False,
    ) -> Recall:
        """§4.2: the notes to attach to a user message; raises only `Locked` (logs the rest).

        `history` holds the conversation's earlier messages as dicts; ids recalled into
        them (``metadata["memdir"]["recalled"]``) are not attached again. Store the
        returned `metadata` on the message and show `label`.
        """
        from memdir.retrieve import Recall, Recaller, recalled_ids

        if is_subagent or not self.settings.recall.enabled:
            return Recall()
        exclude = recalled_ids(history)
        try:
            warm = self._warm(message, exclude)
        except Locked:
            raise
        except Exception:
            _recall_log.exception("warm recall failed; this message is recalled by its words")
            warm = None
        if warm is not None:
            return self._recorded(*warm)
        try:
            if self._recaller is None:
                self._recaller = Recaller()
            with self._first:  # one first recall at a time: the others find notes taken in
                cold = self._stored() if self._recaller.is_empty() else None
                if cold is not None:  # a short-lived process: most notes by stored terms
                    stored, read, load = cold
                    found = self._recaller.recall_stored(
                        message, stored, read, load, self.settings.recall, exclude=exclude
                    )
                    scopes = {(t.scope, t.note_id) for t in stored}
                    scopes |= {(n.scope, n.id) for n in read}
            if cold is None:
                notes = self.notes()
                found = self._recaller.recall(message, notes, self.settings.recall, exclude=exclude)
                chosen = set(found.note_ids)  # only what was attached needs its scope
                scopes = {(n.scope, n.id) for n in notes if n.id in chosen}
        except Locked:
            raise  # an encrypted store is locked: say so (and how to unlock), never hide it
        except Exception:
            _recall_log.exception("recall failed; the message goes on without recalled notes")
            return Recall()
        return self._recorded(found, scopes)

    def _recorded(self, found: Recall, scopes: set[tuple[Scope | None, str]]) -> Recall:
        """`found`, its notes counted as recalled in the usage statistics."""
        if not found.count:
            return found
        for store in self.stores.chosen(None):
            ids = [i for i in found.note_ids if (store.scope, i) in scopes]
            try:
                self.usage.record(store.state_key, ids)
            except OSError as exc:  # a full or read-only disk: recall goes on, unrecorded
                _recall_log.warning("cannot record recall statistics: %s", exc.strerror or exc)
            except Exception:
                _recall_log.warning("cannot record recall statistics", exc_info=True)
        return found

    def _warm(
        self, message: str, exclude: frozenset[str]
    ) -> tuple[Recall, set[tuple[Scope | None, str]]] | None:
        """Recall ranked by the hybrid search, where its vectors are warm (the MCP server, the
        hook agent, the web page); None elsewhere (the lexical recall then runs).

        Nothing is attached when the search finds no good match (the relevance floor,
        `memdir.retrieve.hybrid.no_good_match`); otherwise the best notes not attached yet,
        not superseded, up to `recall.perTurn`, each within `WARM_MARGIN` of the best
        one's score: a note far behind the best is rarely what the message is about.
        """
        from memdir.retrieve import Recall, render_recall, superseded_ids

        settings = self.settings.recall
        if self._warm_search is None or not message.strip() or settings.per_turn <= 0:
            return None
        # A pasted log or file: its opening is what the model would read of it anyway.
        query = message[:WARM_QUERY_CHARS]
        hits = self._warm_search(query, min(50, settings.per_turn + len(exclude) + 2))
        if hits is None:
            return None
        notes = self.notes()
        gone = superseded_ids(notes)
        shown = {(n.scope, n.id): n for n in notes if not n.private and n.id not in gone}
        chosen: list[Note] = []
        if hits and not hits[0].weak:  # weak is the result's: every hit or none
            best = hits[0].score  # attached already or not, the best hit sets the bar
            for hit in hits:
                if hit.score < best - WARM_MARGIN or len(chosen) >= settings.per_turn:
                    break
                note = shown.get((hit.scope, hit.note_id))
                if note is not None and hit.note_id not in exclude and not hit.superseded_by:
                    chosen.append(note)
        if not chosen:
            return Recall(), set()
        by_id: dict[str, Note] = {}
        for note in sorted(shown.values(), key=lambda n: n.scope is not Scope.PROJECT):
            by_id.setdefault(note.id, note)  # a link means the project's note first (§1.4)
        found = render_recall(chosen, by_id.get, settings)
        return found, {(n.scope, n.id) for n in chosen}

    def extract(
        self,
        conversation: Sequence[Mapping[str, Any]],
        llm: ChatClient | None = None,
        *,
        state: ExtractionState | None = None,
        reason: Reason = "stop",
        is_subagent: bool = False,
        force: bool = False,
        discard: int | None = None,
    ) -> ExtractionResult:
        """One extraction pass (§4.3) over the unread part of `conversation` (memdir.extract);
        `llm` defaults to the chat client given to the memory, else the `[llm]` endpoint."""
        from memdir.extract import extract

        return extract(
            self._host,
            conversation,
            llm if llm is not None else self._chat,
            state=state,
            reason=reason,
            is_subagent=is_subagent,
            force=force,
            discard=discard,
        )

    @staticmethod
    def guidance() -> str:
        """The shipped text that tells an agent when a note is worth writing and when not."""
        return GUIDANCE

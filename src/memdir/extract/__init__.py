"""Memory extraction (§4.3): a small model turns a conversation into notes, checked before writing.

::

    extract(memory, conversation, llm, state=..., reason="stop" | "compaction")
      triggers.plan_window   which messages no pass has read; whether the rules allow a pass
      prompt.build_prompt    those messages + relevant notes in full + the rest by summary
      llm.ChatClient         one model call (HttpChatClient: OpenAI-compatible, §3 HTTP rules)
      apply.apply_answer     the untrusted answer checked against what was shown, then written
"""

from memdir.extract.apply import BACKUP_REASON, AnswerRejected, Dropped
from memdir.extract.llm import (
    ChatClient,
    ChatFailed,
    ChatUnavailable,
    HttpChatClient,
    client_from_settings,
)
from memdir.extract.prompt import MAX_NOTES_PER_PASS, guidance_text
from memdir.extract.run import ExtractionResult, announcement, extract
from memdir.extract.triggers import ExtractionState, Reason, is_user_turn

__all__ = [
    "BACKUP_REASON",
    "MAX_NOTES_PER_PASS",
    "AnswerRejected",
    "ChatClient",
    "ChatFailed",
    "ChatUnavailable",
    "Dropped",
    "ExtractionResult",
    "ExtractionState",
    "HttpChatClient",
    "Reason",
    "announcement",
    "client_from_settings",
    "extract",
    "guidance_text",
    "is_user_turn",
]

"""Agent hooks (§11): the §4 loop — the prompt index at a run's start, recall on each user
message, extraction when history is compacted or a run ends — inside the agent clients
people use (Claude Code, Codex, Gemini CLI, Cursor), through their hook systems.

`memdir hook EVENT` (`memdir.hooks.entry`) answers one hook call; `memdir.hooks.warm` keeps
a warm process per home so recall answers in milliseconds; `memdir.hooks.background` runs
extraction passes detached; `memdir.hooks.transcripts` reads the clients' transcripts
back. Installing the hook configuration is `memdir.clients.hooks`.
"""

"""Syscall-level fault injection (strace --inject) into the CLI's write paths (issue 10 §2)."""

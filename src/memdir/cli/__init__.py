"""The `memdir` command line: thin click commands over `memdir.Memory`."""

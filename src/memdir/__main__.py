"""`python -m memdir`: the same as the `memdir` command."""

from memdir.cli.main import main

main(prog_name="memdir")

"""`python -m memdir`: the same as the `memdir` command."""

from memdir.launch import main

main()

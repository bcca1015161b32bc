"""`python -m e2store`: the command line."""

from e2store.cli import main

main()

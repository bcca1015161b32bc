"""Command line interface: `e2store COMMAND ...` (click)."""

from e2store.cli.main import main

__all__ = ["main"]

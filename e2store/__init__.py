"""e2store: corolle database and precomputation pipeline for edge-matching puzzles."""

__version__ = "0.1.0"


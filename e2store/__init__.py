"""e2store: corolle database and precomputation pipeline for edge-matching puzzles."""

__version__ = "0.1.0"



def connect(root, database: str = ":memory:"):
    """Open a corolle store for queries (see `e2store.query`); usable in `with`."""
    from e2store.query.handle import connect as _connect

    return _connect(root, database)

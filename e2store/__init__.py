"""e2store: corolle database and precomputation pipeline for edge-matching puzzles.

Stages, one subpackage each, data flowing one way (docs/design.md):
`instance` -> `zones` -> `corolles` -> `store` -> `query` -> `solver`, with `reports` and
`counts` (count tables) beside them and `cli` on top.  `e2store.connect(store)` opens a store
for queries.
"""

__version__ = "0.1.0"


def connect(root, database: str = ":memory:"):
    """Open a corolle store for queries (see `e2store.query`); usable in `with`."""
    from e2store.query.handle import connect as _connect

    return _connect(root, database)

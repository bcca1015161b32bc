"""e2store: corolle database and precomputation pipeline for edge-matching puzzles.

Stages, one subpackage each, data flowing one way (docs/design.md):
`instance` -> `zones` -> `corolles` -> `store` -> `query` -> `solver`, with `reports` and
`counts` (count tables) beside them and `cli` on top.  `e2store.connect(store)` opens a store
for queries, `e2store.dataset(store, form, hamming)` gives one form to any Arrow reader.
"""

__version__ = "0.1.0"


def connect(root, database: str = ":memory:", **limits):
    """Open a corolle store for queries (see `e2store.query`); usable in `with`.  `limits`:
    `memory_limit` (bytes, default 2 GiB) and `seconds` (each query's, default none)."""
    from e2store.query.handle import connect as _connect

    return _connect(root, database, **limits)


def dataset(root, form: str = "flat", hamming: int | None = None):
    """One form of a store (at one hamming, or all) as a `pyarrow.dataset.Dataset`
    (`e2store.store.read.dataset`)."""
    from e2store.store.read import dataset as _dataset

    return _dataset(root, form, hamming)

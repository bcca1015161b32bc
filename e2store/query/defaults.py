"""The query layer's parameters and defaults, declared once and light to import (no duckdb,
pyarrow or numba: the command line's options read them for `--help`): a handle's memory
limit and its floor, DuckDB's allocator setting, the finals' hamming."""

from __future__ import annotations

DEFAULT_MEMORY_LIMIT = 2 << 30  # bytes: a handle's DuckDB memory_limit (DuckDB's: 80 % of RAM)
MIN_MEMORY_LIMIT = 64 << 20  # bytes: a smaller DuckDB memory limit fails every query
# DuckDB's allocator (a jemalloc of its own) keeps the address space it freed unless told
# not to: a capped process's data size would then creep up to the cap with each query.  Set
# in the environment before duckdb is imported (`e2store sql`, the SQL box's workers).
DUCKDB_ALLOCATOR_ENV = ("DUCKDB_JE_MALLOC_CONF", "retain:false")
DEFAULT_FINALS_HAMMING = 2  # the hamming of a finals index's corolles (`e2store.query.finals`)

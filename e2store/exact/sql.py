"""Corolle counts as a plain SQL join in DuckDB: one table of candidate placements per
cell, joined on matching colours, every piece different (docs/exact.md).

The candidate tables are built in SQL from a table of the pieces' colours (grey sides on
exactly the cell's frame sides), the join walks the region outwards from its centre, so
every cell meets its inner neighbours already joined, and DuckDB streams it into one
`count(*)`: nothing of e2store's enumerators, only the instance's colours and the
database engine the store already uses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from e2store.errors import ExactInputError, OutOfReachError
from e2store.exact.encode import STEP
from e2store.exact.models import Limit, as_deadline
from e2store.instance.model import Instance

SIDES = ("w", "n", "e", "s")  # column names of the colour shown on W, N, E, S


@dataclass(frozen=True)
class SqlCount:
    """One count by the SQL model: the number and the seconds it took."""

    count: int
    seconds: float
    query: str


def _placements_sql() -> str:
    """Every (piece, rotation) with the colour it shows on W, N, E, S: rotation r shows the
    piece's colour (s - r) mod 4 on side s."""
    parts = []
    for r in range(4):
        cols = ", ".join(f"c{(s - r) % 4} AS {SIDES[s]}" for s in range(4))
        parts.append(f"SELECT p, {r} AS r, {cols} FROM pieces")
    return " UNION ALL ".join(parts)


def join_query(width: int, height: int, cells: Sequence[tuple[int, int]]) -> tuple[str, list]:
    """The candidate-table statements and the counting join for `cells` (ordered so that
    each cell after the first touches an earlier one when the region is connected)."""
    index = {c: i for i, c in enumerate(cells)}
    setup = []
    for i, (x, y) in enumerate(cells):
        conds = []
        for s, (dx, dy) in enumerate(STEP):
            frame = not (0 <= x + dx < width and 0 <= y + dy < height)
            conds.append(f"{SIDES[s]} {'=' if frame else '<>'} 0")
        setup.append(f"CREATE TEMP TABLE t{i} AS SELECT * FROM placements WHERE "
                     + " AND ".join(conds))
    where = []
    for i, (x, y) in enumerate(cells):
        for s, (dx, dy) in enumerate(STEP):
            j = index.get((x + dx, y + dy))
            if j is not None and j < i:
                where.append(f"t{i}.{SIDES[s]} = t{j}.{SIDES[(s + 2) % 4]}")
        where.extend(f"t{i}.p <> t{j}.p" for j in range(i))
    query = ("SELECT count(*) FROM " + ", ".join(f"t{i}" for i in range(len(cells)))
             + (" WHERE " + " AND ".join(where) if where else ""))
    return query, setup


def outward(cells: Sequence[tuple[int, int]], x: int, y: int) -> list[tuple[int, int]]:
    """`cells` by distance from (x, y), then row, then column: inner neighbours first."""
    return sorted(cells, key=lambda c: (abs(c[0] - x) + abs(c[1] - y), c[1], c[0]))


def count_region(instance: Instance, cells: Sequence[tuple[int, int]], *,
                 centre: tuple[int, int] | None = None, seconds: Limit = None,
                 threads: int = 2, memory_limit: str = "4GB") -> SqlCount:
    """Number of valid fillings of `cells` (distinct pieces, matching joins inside the
    region, grey facing the frame) by one DuckDB join.  OutOfReachError past `seconds` (a
    number, or a `Deadline` shared with other steps)."""
    import duckdb

    deadline = as_deadline(seconds)  # nan, inf, 0 refused; 1e308 a limit never reached
    w, h = instance.width, instance.height
    for cx, cy in cells:
        if not (0 <= cx < w and 0 <= cy < h):
            raise ExactInputError(f"cell ({cx}, {cy}) is off the {w}x{h} board")
    cells = list(dict.fromkeys(cells))
    if centre is not None:
        cells = outward(cells, *centre)
    query, setup = join_query(w, h, cells)
    con = duckdb.connect(":memory:", config={"threads": threads, "memory_limit": memory_limit,
                                             "enable_external_access": False})
    try:
        # the join is written outwards from the centre, each cell meeting its inner
        # neighbours: DuckDB's own join order was up to 8x slower (5x5, hamming 2)
        con.execute("SET disabled_optimizers = 'join_order'")
        con.execute("SET enable_progress_bar = false")
        rows = [(p, *map(int, instance.pieces[p])) for p in range(instance.n_pieces)]
        con.execute("CREATE TEMP TABLE pieces (p INTEGER, c0 INTEGER, c1 INTEGER, "
                    "c2 INTEGER, c3 INTEGER)")
        if rows:
            con.executemany("INSERT INTO pieces VALUES (?, ?, ?, ?, ?)", rows)
        con.execute(f"CREATE TEMP TABLE placements AS {_placements_sql()}")
        for stmt in setup:
            con.execute(stmt)
        timer = None
        left = deadline.left()
        if left is not None and left <= 0:
            raise deadline.late(f"the SQL join of {len(cells)} cells", "not started")
        if left is not None and left < threading.TIMEOUT_MAX:
            timer = threading.Timer(left, con.interrupt)
            timer.start()
        t0 = time.perf_counter()
        try:
            (n,) = con.execute(query).fetchall()[0]  # a COUNT(*): one row
        except duckdb.InterruptException:
            raise deadline.late(f"the SQL join of {len(cells)} cells") from None
        except duckdb.OutOfMemoryException as exc:
            raise OutOfReachError(f"the SQL join of {len(cells)} cells ran out of its "
                                  f"{memory_limit} memory limit: {exc}") from None
        finally:
            if timer is not None:
                timer.cancel()
        return SqlCount(int(n), time.perf_counter() - t0, query)
    finally:
        con.close()

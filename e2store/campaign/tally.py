"""An arm's restarts folded (`Tally`): what a campaign's analysis reads of them, kept as
value counts and sums, so a report of 10^8 restarts holds a few thousand numbers per arm,
not an array per restart.  A report adds its restarts a file at a time (`Tally.add`,
`tally_chunks`); per-restart arrays fold the same way (`Tally.of`), so the analysis has
one path whatever the source.

Held per arm: the restarts; the sums of nodes, search seconds and fill seconds; the
distinct deepest depths and final (filled) scores with their counts; of the finished
restarts, their scores before and after the finish (counts), the gain's sum and maximum,
the restarts raised, the finish's seconds; the board sizes met; the best `BEST_LISTED`
restarts (final score, then depth, then seed and restart); the final complete boards'
canonical keys met (`keys`, when the rows carry them: repeats are complete boards less
distinct keys).  Everything but the keys is bounded by the board's size; the keys of a
report are kept in a DuckDB database on disk (`SpilledKeys`: its memory limit bounds
them), those of arrays in memory in a set."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

BEST_LISTED = 3  # best restarts listed per arm

Counts = tuple[np.ndarray, np.ndarray]  # distinct values ascending, restarts taking each


def _counts(a: np.ndarray) -> Counts:
    v, c = np.unique(np.asarray(a), return_counts=True)
    return v, c.astype(np.int64)


def _merge(a: Counts, b: Counts) -> Counts:
    """Two value counts as one."""
    if not len(a[0]):
        return b
    if not len(b[0]):
        return a
    values, inverse = np.unique(np.concatenate([a[0], b[0]]), return_inverse=True)
    return values, np.bincount(inverse.reshape(-1), weights=np.concatenate([a[1], b[1]]),
                               minlength=len(values)).astype(np.int64)


def _empty() -> Counts:
    return np.zeros(0, np.int64), np.zeros(0, np.int64)


def at_least(c: Counts, v: float) -> int:
    """Restarts of `c` with a value of at least `v`."""
    return int(c[1][c[0] >= v].sum())


class Keys(Protocol):
    """An arm's distinct final complete boards, by their keys (32 hex digits)."""

    def add(self, keys: np.ndarray) -> None: ...

    def distinct(self) -> int: ...


class MemoryKeys:
    """`Keys` in a set: an arm's arrays already in memory (`Tally.of`)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def add(self, keys: np.ndarray) -> None:
        self.seen.update(np.asarray(keys, dtype=object).tolist())

    def distinct(self) -> int:
        return len(self.seen)


class SpilledKeys:
    """Every arm's keys in a DuckDB database in a temporary directory, as two 64-bit
    halves: its memory limit bounds what a report holds of them (it spills to disk),
    whatever the number of restarts; the distinct count is exact.  Use in `with`."""

    MEMORY = "256MB"

    def __init__(self) -> None:
        import tempfile

        import duckdb

        self.dir = tempfile.TemporaryDirectory(prefix="e2store-keys-")
        self.con = duckdb.connect(f"{self.dir.name}/keys.duckdb")
        for setting in (f"memory_limit = '{self.MEMORY}'", f"temp_directory = '{self.dir.name}'",
                        "enable_progress_bar = false", "preserve_insertion_order = false"):
            self.con.execute(f"SET {setting}")
        self.con.execute("CREATE TABLE keys (arm VARCHAR, hi UBIGINT, lo UBIGINT)")
        self.counts: dict[str, int] | None = None

    def __enter__(self) -> SpilledKeys:
        return self

    def __exit__(self, *exc: object) -> None:
        self.con.close()
        self.dir.cleanup()

    def of(self, arm: str) -> Keys:
        """The keys of `arm`, as a `Keys`."""
        return _ArmKeys(self, arm)

    def add(self, arm: str, keys: np.ndarray) -> None:
        import pyarrow as pa

        if not len(keys):
            return
        listed = np.asarray(keys, dtype=object).tolist()
        if not all(isinstance(k, str) and len(k) == 32 for k in listed):
            raise ValueError("a key that is not 32 hex digits")
        raw = np.frombuffer(bytes.fromhex("".join(listed)), dtype="<u8").reshape(-1, 2)
        batch = pa.table({"hi": raw[:, 0], "lo": raw[:, 1]})
        self.con.register("batch", batch)
        self.con.execute("INSERT INTO keys SELECT ?, hi, lo FROM batch", [arm])
        self.con.unregister("batch")
        self.counts = None

    def distinct(self, arm: str) -> int:
        if self.counts is None:
            self.counts = dict(self.con.execute(
                "SELECT arm, count(DISTINCT (hi, lo)) FROM keys GROUP BY arm").fetchall())
        return int(self.counts.get(arm, 0))


class _ArmKeys:
    def __init__(self, store: SpilledKeys, arm: str):
        self.store, self.arm = store, arm

    def add(self, keys: np.ndarray) -> None:
        self.store.add(self.arm, keys)

    def distinct(self) -> int:
        return self.store.distinct(self.arm)


class CountedKeys:
    """`Keys` counted already (what a `SpilledKeys` said, once it is closed)."""

    def __init__(self, n: int):
        self.n = n

    def add(self, keys: np.ndarray) -> None:
        raise ValueError("the keys were counted: nothing more is added")

    def distinct(self) -> int:
        return self.n


@dataclass
class Tally:
    """One arm's restarts folded (module docstring)."""

    restarts: int = 0
    nodes: float = 0.0
    seconds: float = 0.0  # the searches'
    fill_seconds: float = 0.0  # what came after each search: its fill and finish
    depth: Counts = field(default_factory=_empty)
    filled: Counts = field(default_factory=_empty)
    finished: int = 0
    before_finish: Counts = field(default_factory=_empty)  # the finished restarts' scores
    after_finish: Counts = field(default_factory=_empty)
    gain: int = 0  # summed over the finished restarts
    raised: int = 0
    max_gain: int = 0
    finish_seconds: float = 0.0  # of the finished restarts
    cells: set[int] = field(default_factory=set)
    joins: set[int] = field(default_factory=set)
    listed: bool = True  # the rows carry seed, restart and url: best restarts are listed
    best: list[dict[str, Any]] = field(default_factory=list)
    keys: Keys = field(default_factory=lambda: MemoryKeys())  # final complete boards'
    complete: int = 0  # restarts whose final board is complete (of rows with keys)
    keyed: bool = True  # every row folded carried its final board's key

    @classmethod
    def of(cls, r: Mapping[str, Sequence[float] | np.ndarray]) -> Tally:
        """The tally of one arm's per-restart arrays (`e2store.boards.restart_columns`)."""
        t = cls()
        t.add(r)
        return t

    @property
    def repeats(self) -> int | None:
        """Final complete boards equal to one found before (turned too), when known."""
        return self.complete - self.keys.distinct() if self.keyed else None

    def add(self, r: Mapping[str, Sequence[float] | np.ndarray],
            where: str | None = None) -> None:
        """Fold the restarts `r` (arrays "depth", "filled", "nodes", "seconds", and when
        given "fill_seconds", "before", "finished", "finish_seconds", "seed", "restart",
        "url", "cells", "joins", "key") into the tally; `where`: the file they came from,
        kept with a best restart whose rows carry no url (`resolve_urls` reads it)."""
        depth, filled = np.asarray(r["depth"]), np.asarray(r["filled"])
        n = len(depth)
        if len(filled) != n or len(r["nodes"]) != n or len(r["seconds"]) != n:
            raise ValueError("depth, filled, nodes and seconds need one value per restart")
        fill = np.asarray(r.get("fill_seconds", np.zeros(n)), dtype=np.float64)
        if len(fill) != n:
            raise ValueError("fill_seconds needs one value per restart")
        self.restarts += n
        self.nodes += float(np.sum(r["nodes"], dtype=np.float64))
        self.seconds += float(np.sum(r["seconds"], dtype=np.float64))
        self.fill_seconds += float(fill.sum())
        self.depth = _merge(self.depth, _counts(depth))
        self.filled = _merge(self.filled, _counts(filled))
        for k in ("cells", "joins"):
            if k in r:
                getattr(self, k).update(int(v) for v in np.unique(np.asarray(r[k])))
        self._add_finish(r, n)
        self._add_best(r, where)
        if "key" in r:
            keys = np.asarray(r["key"], dtype=object)
            complete = keys != ""
            self.complete += int(complete.sum())
            try:
                self.keys.add(keys[complete])
            except ValueError as e:  # a key a file's pages stored so: damaged, or not ours
                from e2store.errors import DamagedDataError

                raise DamagedDataError(f"{where or 'the rows'}: damaged boards file ({e})"
                                       ) from None
        elif n:
            self.keyed = False

    def _add_finish(self, r: Mapping[str, Sequence[float] | np.ndarray], n: int) -> None:
        d = np.asarray(r.get("finished", np.zeros(n)), dtype=bool)
        if not d.any():
            return
        before = np.asarray(r["before"], dtype=np.int64)[d]
        after = np.asarray(r["filled"], dtype=np.int64)[d]
        gain = after - before
        self.finished += int(d.sum())
        self.before_finish = _merge(self.before_finish, _counts(before))
        self.after_finish = _merge(self.after_finish, _counts(after))
        self.gain += int(gain.sum())
        self.raised += int((gain > 0).sum())
        self.max_gain = int(gain.max()) if self.finished == len(gain) else max(
            self.max_gain, int(gain.max()))
        fin = np.asarray(r.get("finish_seconds", np.zeros(n)), dtype=np.float64)
        self.finish_seconds += float(fin[d].sum())

    def _add_best(self, r: Mapping[str, Sequence[float] | np.ndarray],
                  where: str | None) -> None:
        if any(k not in r for k in ("seed", "restart")) or ("url" not in r and where is None):
            self.listed = False
            return
        filled, depth = np.asarray(r["filled"]), np.asarray(r["depth"])
        seed, restart = np.asarray(r["seed"]), np.asarray(r["restart"])
        order = np.lexsort((restart, seed, -depth, -filled))[:BEST_LISTED]
        urls = np.asarray(r["url"], dtype=object) if "url" in r else None
        mine = [{"filled": int(filled[i]), "depth": int(depth[i]), "seed": int(seed[i]),
                 "restart": int(restart[i]),
                 "url": str(urls[i]) if urls is not None else None, "where": where}
                for i in order.tolist()]
        self.best = sorted(self.best + mine, key=lambda b: (-b["filled"], -b["depth"],
                                                            b["seed"], b["restart"]))[
            :BEST_LISTED]

    def best_restarts(self) -> list[dict[str, Any]]:
        """The best restarts (`BEST_LISTED`): filled, depth, seed, restart and url; none
        when the rows did not carry them."""
        if not self.listed:
            return []
        return [{k: b[k] if k != "url" else (b[k] or "") for k in
                 ("filled", "depth", "seed", "restart", "url")} for b in self.best]

    def resolve_urls(self, final_url: Callable[[str, int, int], str]) -> None:
        """Fill each best restart's url from the file it came from (`final_url(path,
        seed, restart)`: `e2store.boards.final_url`)."""
        for b in self.best:
            if b["url"] is None and b["where"] is not None:
                b["url"] = final_url(b["where"], b["seed"], b["restart"])


Rows = Mapping[str, Mapping[str, Sequence[float] | np.ndarray] | Tally]


def tallies(rows: Rows) -> dict[str, Tally]:
    """Per arm, its tally: a `Tally` as given, arrays folded (`Tally.of`)."""
    return {name: r if isinstance(r, Tally) else Tally.of(r) for name, r in rows.items()}


def tally_chunks(chunks: Iterable[tuple[str, str | None, Mapping[str, np.ndarray]]],
                 final_url: Callable[[str, int, int], str] | None = None,
                 ) -> dict[str, Tally]:
    """Per arm, the tally of `chunks` ((arm, file or None, per-restart arrays), a file at
    a time: `e2store.boards.open_boards(...).restart_chunks()`), the keys of the final
    complete boards in a `SpilledKeys` (counted, then let go), the best restarts' urls
    read from their files at the end (`final_url`)."""
    out: dict[str, Tally] = {}
    with SpilledKeys() as store:
        for arm, where, cols in chunks:
            if arm not in out:
                out[arm] = Tally(keys=store.of(arm))
            out[arm].add(cols, where)
        for t in out.values():
            t.keys = CountedKeys(t.keys.distinct())
    for t in out.values():
        if final_url is not None:
            t.resolve_urls(final_url)
    return dict(sorted(out.items()))


def tally_boards(handle: Any, checked: bool | str = "compacted") -> dict[str, Tally]:
    """Per arm, the tally of a boards file's or dataset's restarts
    (`e2store.boards.open_boards(...)`'s `restart_chunks(checked=...)`), a file at a time."""
    from e2store.boards import final_url

    return tally_chunks(handle.restart_chunks(checked=checked), final_url)


def board_size(tallies: Mapping[str, Tally], default: tuple[int, int]) -> tuple[int, int]:
    """(cells, joins) of the board the arms' restarts searched (`default` when the rows did
    not say it); ValueError when they disagree."""
    found = []
    for key, d in zip(("cells", "joins"), default, strict=True):
        values = set().union(*(getattr(t, key) for t in tallies.values())) if tallies else set()
        if len(values) > 1:
            raise ValueError(f"the rows hold restarts of boards of different sizes ({key} "
                             f"{sorted(values)[:4]}): one campaign is one board")
        found.append(values.pop() if values else d)
    return found[0], found[1]

"""A run's restarts per arm, as a campaign's analysis takes them: one value per restart
(its deepest board's depth, its final board's score, the fill's and finish's seconds...)
from the rows' statistics alone, never their cells (`restart_columns`); from a boards file
or dataset read and checked (`campaign_rows`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from e2store.boards.dataset import read_boards_dataset
from e2store.boards.parts import Holder, check_held, moved_arm
from e2store.boards.table import Boards
from e2store.instance.model import Instance


def restart_arrays(boards: Boards, arms: np.ndarray | None = None,
                   ) -> dict[str, dict[str, np.ndarray]]:
    """`restart_columns` of a boards file's or dataset's rows."""
    return restart_columns(boards.stats, boards.cells.shape[1], arms)


def restart_columns(stats: Mapping[str, np.ndarray], n_cells: int,
                    arms: np.ndarray | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Per arm, one value per restart ((seed, restart) pairs, in order) of what a campaign
    report compares: `depth` (the restart's deepest board), `filled` (the score of its
    final board: the finished one (`source` "finished"), else that board with its holes
    filled, else its own), `before` (the filled board's score, before the finish; equal to
    `filled` when not finished), `finished` (1 when the restart has a finished board),
    `nodes` and `seconds` (of the search), `fill_seconds` (of what came after the search,
    its fill and finish: the deepest board's `found` to its final board's),
    `finish_seconds` (the finish's part: the filled board's `found` to the finished
    one's), its `seed`, `restart` and `url` (the final board's), and the board's size,
    `cells` (W*H) and `joins` (2WH - W - H), from which the report takes its depths and
    target scores, and, when the rows carry it, `key` (the final board's canonical key,
    "" with holes: repeats are counted from it); a boards file is one arm, "default".
    The rows of a boards file or dataset as `e2store.campaign.campaign_report` takes
    them: `stats` holds the columns `RESTART_COLUMNS` (the board's cells are never
    needed), `n_cells` is W*H."""
    st = stats
    arm = (np.full(len(st["seed"]), "default", dtype=object) if arms is None
           else np.asarray(arms, dtype=object))
    out: dict[str, dict[str, np.ndarray]] = {}
    source = np.asarray(st["source"], dtype=object)
    key = np.asarray(st["seed"], np.int64) * (1 << 32) + np.asarray(st["restart"], np.int64)
    score = np.asarray(st["score"])
    found = np.asarray(st.get("found", np.zeros(len(score))), dtype=np.float64)
    urls = np.asarray(st.get("url", np.full(len(score), "", dtype=object)), dtype=object)
    for name in sorted(set(arm.tolist())):
        mine = arm == name
        best = np.flatnonzero(mine & (source == "best"))
        order = best[np.argsort(key[best], kind="stable")]
        keys = key[order]

        filled_row = _row_of(key, keys, mine & (source == "filled"))
        finished_row = _row_of(key, keys, mine & (source == "finished"))
        fill = np.where(filled_row >= 0, filled_row, order)
        final = np.where(finished_row >= 0, finished_row, fill)

        def apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            """Seconds from rows `a`'s `found` to rows `b`'s (0 when either is unknown)."""
            fa, fb = found[a], found[b]
            return np.where((fa > 0) & (fb > 0), np.maximum(0.0, fb - fa), 0.0)

        out[str(name)] = {
            "depth": np.asarray(st["depth"])[order].astype(np.int64),
            "filled": score[final].astype(np.int64),
            "before": score[fill].astype(np.int64),
            "finished": (finished_row >= 0).astype(np.int64),
            "nodes": np.asarray(st["nodes"])[order].astype(np.int64),
            "seconds": np.asarray(st["seconds"])[order].astype(np.float64),
            "fill_seconds": apart(order, final),
            "finish_seconds": apart(fill, final),
            "seed": np.asarray(st["seed"])[order].astype(np.int64),
            "restart": np.asarray(st["restart"])[order].astype(np.int64),
            "url": urls[final].astype(object),
            "cells": np.full(len(order), n_cells, dtype=np.int64),
            "joins": np.asarray(st["joins"])[order].astype(np.int64)}
        if "key" in st:
            out[str(name)]["key"] = np.asarray(st["key"], dtype=object)[final]
    return out


def _row_of(key: np.ndarray, keys: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Per restart of `keys`, the row among `where`'s with its key, or -1 (sorted keys,
    searched: vectorised)."""
    rows = np.flatnonzero(where)
    rows = rows[np.argsort(key[rows], kind="stable")]
    if not len(rows):
        return np.full(len(keys), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(key[rows], keys), len(rows) - 1)
    return np.where(key[rows][at] == keys, rows[at], -1)


def campaign_rows(source: str | Path, instance: Instance | None = None,
                  ) -> dict[str, dict[str, np.ndarray]]:
    """The restarts of a boards file or dataset per arm (`restart_arrays`), every row
    checked as it is read (recounted too, given the instance)."""
    from e2store.boards.sources import is_boards_dataset
    from e2store.boards.table import read_boards

    if is_boards_dataset(source):
        d = read_boards_dataset(source, instance)
        return restart_arrays(d.boards, d.arms)
    return restart_arrays(read_boards(source, instance))


# the compact types of the per-restart arrays of a report at scale (restart_stream)
_COMPACT = {"depth": np.int16, "filled": np.int16, "before": np.int16, "finished": np.int8,
            "nodes": np.int64, "seconds": np.float64, "fill_seconds": np.float64,
            "finish_seconds": np.float64, "seed": np.int64, "restart": np.int32,
            "cells": np.int16, "joins": np.int16}
_READ = ("seed", "restart", "source", "depth", "score", "nodes", "seconds", "found", "joins",
         "key")  # "key": in files of version 4


def restart_chunks(files: Mapping[str, Sequence[str | Holder]], n_cells: int, *,
                   want: Mapping[str, str] | None = None,
                   ) -> Iterator[tuple[str, str, dict[str, np.ndarray]]]:
    """(arm, file, `restart_columns` of its rows) of each file of each arm (`files`: arm ->
    the files holding its restarts, each restart in one), a file at a time: only its
    per-restart columns read, their Parquet pages checked against their checksums (a
    damaged page is a DamagedDataError naming the file, never a wrong figure; a board's
    cells are neither read nor checked), without `url` (`final_url` reads a restart's).
    Each file's metadata must say what `want` says (format, instance, size: default the
    first file's) and its arm (when it says one), and a dataset's file (a `Holder`) the
    seed and restarts its name says: else an error naming it."""
    for arm, paths in sorted(files.items()):
        for source in paths:
            path = str(source.path) if isinstance(source, Holder) else source
            stats, meta = _stats_of(path)
            want = want or meta
            _same_file_kind(path, meta, want, arm)
            if isinstance(source, Holder):
                _as_named(source, stats)
            r = restart_columns(stats, n_cells).get("default")
            if r is not None:
                del r["url"]
                yield arm, path, r


def restart_stream(files: Mapping[str, Sequence[str | Holder]], n_cells: int, *,
                   top: int = 3, want: Mapping[str, str] | None = None,
                   ) -> dict[str, dict[str, np.ndarray]]:
    """Per arm, the `restart_chunks` of its files in one set of arrays, in (seed,
    restart) order, in compact types (depths and scores int16, restarts int32: about 60
    bytes a restart); `url` only for each arm's best `top` restarts (by final score then
    depth), "" elsewhere."""
    out: dict[str, dict[str, np.ndarray]] = {}
    chunks: dict[str, list[dict[str, np.ndarray]]] = {}
    where: dict[str, list[str]] = {}
    for arm, path, r in restart_chunks(files, n_cells, want=want):
        chunks.setdefault(arm, []).append({c: r[c].astype(t) for c, t in _COMPACT.items()}
                                          | ({"key": r["key"]} if "key" in r else {}))
        where.setdefault(arm, []).append(path)
    for arm, parts in chunks.items():
        keyed = (*_COMPACT, "key") if all("key" in p for p in parts) else tuple(_COMPACT)
        cols = {c: np.concatenate([p[c] for p in parts]) for c in keyed}
        held = np.repeat(np.arange(len(parts), dtype=np.int32), [len(p["seed"]) for p in parts])
        order = np.lexsort((cols["restart"], cols["seed"]))
        cols = {c: v[order] for c, v in cols.items()}
        held = held[order]
        at = len(held)
        url = np.full(at, "", dtype=object)
        rank = cols["filled"].astype(np.int32) * (1 << 15) + cols["depth"].astype(np.int32)
        for _ in range(min(top, at)):  # the best first, the first of equals: as a lexsort
            i = int(np.argmax(rank))
            url[i] = final_url(where[arm][int(held[i])], int(cols["seed"][i]),
                               int(cols["restart"][i]))
            rank[i] = np.iinfo(np.int32).min
        out[arm] = {**cols, "url": url}
    return out


_KIND = ("format", "instance", "width", "height")


def _as_named(f: Holder, stats: Mapping[str, np.ndarray]) -> None:
    """DamagedDataError unless the rows of `f` are of the seed and restarts its name says
    (a file renamed, or damaged)."""
    from e2store.errors import DamagedDataError
    from e2store.instance.parsing import shown_path

    if f.compacted:
        check_held(f.path, stats["seed"], stats["restart"], f.seed, f.first, f.last,
                   f.restarts)
    elif not (np.all(stats["seed"] == f.seed) and np.all(stats["restart"] == f.first)):
        raise DamagedDataError(f"{shown_path(f.path)}: holds rows of another seed or restart "
                               f"than its name says (a part renamed?): move it aside")


def _same_file_kind(path: str, meta: Mapping[str, str], want: Mapping[str, str],
                    arm: str) -> None:
    """SolverError naming `path` unless its metadata is a boards file's of `want`'s kind
    (format, instance, size; a version like the first's, or both of the versions a
    dataset mixes, `READS_WITH`..) and of `arm` (when it says its arm)."""
    from e2store.boards.schema import BOARDS_FORMAT, BOARDS_VERSION, READS_WITH, file_version
    from e2store.errors import SolverError
    from e2store.instance.parsing import shown_path

    version = file_version(meta)
    if meta.get("format") != BOARDS_FORMAT or version is None or version > BOARDS_VERSION:
        raise SolverError(f"{shown_path(path)}: not a boards file this e2store reads (format "
                          f"{meta.get('format')!r:.40}, version {meta.get('version')!r:.20})")
    first = file_version(want) or 0
    if any(meta.get(k) != want.get(k) for k in _KIND) or (
            version != first and min(version, first) < READS_WITH):
        raise SolverError(f"{shown_path(path)}: holds boards of instance "
                          f"{meta.get('instance')!r:.80} ({meta.get('width')}x"
                          f"{meta.get('height')}, version {meta.get('version')!r:.20}), the "
                          f"dataset's first file those of {want.get('instance')!r:.80}: one "
                          f"dataset holds one instance's boards")
    moved = moved_arm(path, dict(meta), arm)
    if moved is not None:
        raise moved


def _stats_of(path: str) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The per-restart columns of one file, its pages' checksums verified, and its
    metadata."""
    t = _columns(path, list(_READ), optional=("key",))
    meta = {k.decode(errors="replace"): v.decode(errors="replace")
            for k, v in (t.schema.metadata or {}).items()}
    return {c: (np.array(t.column(c).to_pylist(), dtype=object) if c in ("source", "key")
                else t.column(c).to_numpy()) for c in t.column_names}, meta


def _columns(path: str, columns: list[str], optional: tuple[str, ...] = ()):
    """`columns` of the table file `path`, Parquet pages checked against their checksums:
    DamagedDataError naming the file for a damaged page or footer, a file that is no
    table, or one without them."""
    import pyarrow.parquet as pq

    from e2store.errors import DamagedDataError
    from e2store.files import is_ipc, read_table
    from e2store.instance.parsing import shown_path

    try:
        if optional:
            names = set(pq.read_schema(path).names if not is_ipc(path)
                        else read_table(path).column_names)
            columns = [c for c in columns if c not in optional or c in names]
        return (read_table(path).select(columns) if is_ipc(path) else
                pq.read_table(path, columns=columns, page_checksum_verification=True))
    except FileNotFoundError:
        raise
    except Exception as e:  # pyarrow's errors: a damaged page, a file that is no table
        first = (str(e).splitlines() or [type(e).__name__])[0][:160]
        raise DamagedDataError(f"{shown_path(path)}: damaged boards file ({first}); it is "
                               f"left as it is: restore it from a copy, or move it "
                               f"aside") from None


def final_url(path: str, seed: int, restart: int) -> str:
    """The URL of a restart's final board (finished, else filled, else best)."""
    import pyarrow.compute as pc

    t = _columns(path, ["seed", "restart", "source", "url"])
    t = t.filter(pc.and_(pc.equal(t["seed"], seed), pc.equal(t["restart"], restart)))
    by = dict(zip(t["source"].to_pylist(), t["url"].to_pylist(), strict=True))
    return str(by.get("finished") or by.get("filled") or by.get("best") or "")


def merge_restarts(a: Mapping[str, Mapping[str, np.ndarray]],
                   b: Mapping[str, Mapping[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
    """Per arm, the restarts of `a` and `b` (disjoint) in one set of arrays, in (seed,
    restart) order; `b`'s in `a`'s types where `a` has the arm."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for arm in sorted(set(a) | set(b)):
        if arm not in a or arm not in b:
            out[arm] = dict(a.get(arm) or b[arm])
            continue
        x, y = a[arm], b[arm]
        cols = {k: np.concatenate([x[k], np.asarray(y[k]).astype(x[k].dtype)]) for k in x}
        order = np.lexsort((cols["restart"], cols["seed"]))
        out[arm] = {k: v[order] for k, v in cols.items()}
    return out


def top_places(files: Mapping[str, Sequence[str | Holder]], k: int,
               ) -> list[tuple[int, int, str, int, int, int, str]]:
    """The places of the best `k` kept boards of `files` (arm -> its files), a file at a
    time from their statistics columns alone (pages checked): (-score, -depth, arm, seed,
    restart, the row in its file, the file), best first, ties in the order a dataset's read
    gives its rows."""
    import heapq

    best: list[tuple[int, int, str, int, int, int, str]] = []
    for arm, paths in sorted(files.items()):
        for source in paths:
            path = str(source.path) if isinstance(source, Holder) else source
            t = _columns(path, ["seed", "restart", "score", "depth", "kept"],
                         optional=("kept",))
            st = {c: t.column(c).to_numpy() for c in t.column_names}
            kept = st.get("kept", np.ones(t.num_rows, dtype=bool))
            rows = np.flatnonzero(kept)
            rows = rows[np.lexsort((rows, st["restart"][rows], st["seed"][rows],
                                    -st["depth"][rows], -st["score"][rows]))][:k]
            mine = [(-int(st["score"][i]), -int(st["depth"][i]), arm, int(st["seed"][i]),
                     int(st["restart"][i]), int(i), path) for i in rows.tolist()]
            best = heapq.nsmallest(k, best + mine)
    return best

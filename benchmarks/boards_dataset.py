"""The boards dataset of `solve --best -o DIR` (issue 48): what appending a restart costs as
the dataset grows, and what reading and querying 10^5 boards costs.

    python benchmarks/boards_dataset.py [--size 6] [--boards 100000] [--at 10 1000 100000]
        [--appends 20] [--dir DIR] [--json OUT]
    python benchmarks/boards_dataset.py --compact [--size 16] [--parts 10000]
        [--million 1000000] [--dir DIR] [--json OUT]

A synthetic dataset of one instance (`generate_instance`, `--size` cells a side), a part
per restart holding two boards (a best board and its filled one, random placements with a
few holes, their scores recounted): as `solve --best` writes them.

* **append**: the time of `write_part` (a restart's part, written atomically and fsynced,
  as a run writes it) at restart 10, 1,000 and 100,000 of the dataset (median and max of
  `--appends` parts), each followed by an append to a small dataset (10 parts and up),
  timed alike: the two medians under the same load of the machine.  The parts before
  each point are written directly (Parquet without the atomic rename or fsync: the same
  files, faster; a process per CPU); past the boards read below, the directory is filled
  to the last point with hard links to one part (an append's cost depends on how many
  names its directory holds, not on what they hold), so the dataset is read only before.
* **read**: `read_boards_dataset` of the first `--boards` boards (`--boards / 2` parts):
  every part checked (digest; with the instance, a recount), as `sql --boards` does.
* **query**: the hunter's queries of docs/queries.md (the best board per arm, counts per
  score and per depth, the best score over time) over the checked rows (the view
  `boards` of `sql --boards`), and for comparison one of them over the parts read
  directly by DuckDB (`read_parquet`, unchecked: only the columns the query names).

**--compact** (compaction, `compact_boards_dataset`), instead of the figures above:

* `--parts` parts written directly, read and checked (with a recount) as parts, compacted
  (every part checked with a recount, the compacted files written, read back, the parts
  removed), then read and checked from the compacted files: the same rows.
* `--million` boards (half a restart each, two arms) written directly as compacted files
  (as a compaction writes them; each board's URL made up: the length and alphabet of a
  real one, every one different), then in a fresh process each: `read_boards_dataset`
  with the recount, and the campaign report's statistics
  (`e2store.boards.campaign_rows`, then `e2store.campaign.stats.campaign_markdown`):
  seconds and peak memory (RSS) of each.

Prints one line per figure; `--json OUT` writes them.  About a minute and a half with the
defaults on the 2-core development VM when it is idle (two and a half while a CI run
shares it); `--size 16 --boards 10000 --at 10 1000 10000`, about a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from e2store.boards.dataset import (  # noqa: E402
    COMPACT_RESTARTS,
    compact_boards_dataset,
    compact_name,
    part_path,
    read_boards_dataset,
    write_part,
)
from e2store.boards.table import (  # noqa: E402
    Boards,
    boards_table,
    inner_joins,
    make_boards,
    recount,
    rows_digest,
)
from e2store.instance.generate import generate_instance  # noqa: E402
from e2store.instance.url import board_url  # noqa: E402
from e2store.query.tables import TablesHandle  # noqa: E402

QUERIES = {
    "best board per arm": "SELECT arm, arg_max(url, (score, -found)) AS url, max(score) AS "
                          "best FROM boards WHERE source = 'filled' GROUP BY arm",
    "counts per score": "SELECT source, score, count(*) AS boards FROM boards GROUP BY ALL "
                        "ORDER BY ALL",
    "counts per depth": "SELECT depth, count(*) AS boards FROM boards WHERE source = 'best' "
                        "GROUP BY depth ORDER BY depth DESC",
    "best score over time": "SELECT found, score, max(score) OVER (ORDER BY found) AS best "
                            "FROM boards WHERE source = 'filled' QUALIFY score = best ORDER "
                            "BY found",
}


class Synthetic:
    """Parts of random boards of one instance, made quickly: the rows of every restart
    drawn at once, each part's table sliced from them with its own digest."""

    def __init__(self, size: int, restarts: int, seed: int = 0):
        self.inst = generate_instance(size, size, 4, 8, seed)
        n, rng = size * size, np.random.default_rng(seed)
        k = 2 * restarts
        rot = rng.integers(0, 4, (k, n))
        cells = np.argsort(rng.random((k, n)), axis=1) * 4 + rot
        holes = rng.random((k, n)) < 0.04
        holes[1::2] = False  # the filled board of each restart: no hole
        cells = np.where(holes, -1, cells).astype(np.int16)
        rc = recount(self.inst, cells)
        url = board_url(self.inst, cells[1].astype(np.int64))  # one URL's length for all
        restart = np.repeat(np.arange(restarts), 2)
        self.rows = [{"depth": int(n - rc["holes"][i]), "score": int(rc["matched"][i]),
                      "joins": inner_joins(size, size),
                      "mismatches": int(rc["mismatched"][i]), "holes": int(rc["holes"][i]),
                      "seed": 0, "restart": int(restart[i]), "nodes": 10**9,
                      "seconds": 20.0, "source": "filled" if i % 2 else "best",
                      "found": 1.8e9 + 20.0 * int(restart[i]), "url": url}
                     for i in range(k)]
        self.boards = make_boards(n, cells, self.rows)
        self.table = boards_table(self.inst, self.boards)
        self.meta = {k.decode(): v.decode() for k, v in self.table.schema.metadata.items()}

    def part(self, restart: int) -> Boards:
        a = 2 * restart
        return Boards(self.boards.cells[a:a + 2],
                      {k: v[a:a + 2] for k, v in self.boards.stats.items()})

    def write_direct(self, root: Path, arm: str, restart: int) -> None:
        """The part of `restart`, written straight to its name (no temp file, no fsync)."""
        import pyarrow.parquet as pq

        meta = {**self.meta, "rows_sha256": rows_digest(self.meta, self.part(restart))}
        t = self.table.slice(2 * restart, 2).replace_schema_metadata(meta)
        pq.write_table(t, part_path(root, arm, 0, restart), compression="none",
                       use_dictionary=False, write_statistics=False, write_page_checksum=True)


_SYN: dict = {}


def _write_range(size: int, restarts: int, root: Path, arm: str, start: int, stop: int) -> None:
    """A worker process: the parts start..stop-1 written directly (its own `Synthetic`,
    the same rows: the same seed)."""
    if (size, restarts) not in _SYN:
        _SYN.clear()
        _SYN[size, restarts] = Synthetic(size, restarts)
    for k in range(start, stop):
        _SYN[size, restarts].write_direct(root, arm, k)


def fill(syn: Synthetic, size: int, restarts: int, root: Path, arm: str, start: int,
         stop: int) -> None:
    """The parts start..stop-1 written directly, over one process per CPU when many."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    (root / f"arm={arm}").mkdir(parents=True, exist_ok=True)
    if stop - start < 2000:
        for k in range(start, stop):
            syn.write_direct(root, arm, k)
        return
    n = max(1, min(os.cpu_count() or 1, (stop - start) // 500))
    cuts = np.linspace(start, stop, n + 1).astype(int)
    with ProcessPoolExecutor(n, mp_context=mp.get_context("spawn")) as pool:
        for f in [pool.submit(_write_range, size, restarts, root, arm, int(a), int(b))
                  for a, b in zip(cuts, cuts[1:], strict=False)]:
            f.result()


def append_ms(syn: Synthetic, root: Path, arm: str, start: int, count: int,
              fresh: Path, fresh_start: int) -> tuple[list[float], list[float]]:
    """Milliseconds of `count` appends at restart `start` of `root`, each followed by one
    to the small dataset `fresh` (at `fresh_start`): the two under the same load."""
    out: tuple[list[float], list[float]] = ([], [])
    for i in range(count):
        for j, (where, k) in enumerate(((root, start + i), (fresh, fresh_start + i))):
            t = time.perf_counter()
            write_part(where, syn.inst, syn.part(k), arm=arm, seed=0, restart=k)
            out[j].append((time.perf_counter() - t) * 1e3)
    return out


def timed(f):
    t = time.perf_counter()
    value = f()
    return value, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=6, help="cells a side (6: the tests' board; "
                    "16: Eternity II's, about 5 times slower a part)")
    ap.add_argument("--boards", type=int, default=100_000, help="boards read and queried")
    ap.add_argument("--at", type=int, nargs="+", default=[10, 1000, 100_000],
                    help="restarts at which appending is timed")
    ap.add_argument("--appends", type=int, default=20, help="parts timed at each point")
    ap.add_argument("--dir", type=Path, default=None, help="where to build the dataset "
                    "(default: a temporary directory, removed at the end)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--compact", action="store_true", help="the compaction figures instead "
                    "(module docstring; use --size 16)")
    ap.add_argument("--parts", type=int, default=10_000, help="--compact: parts compacted")
    ap.add_argument("--million", type=int, default=1_000_000, help="--compact: boards of "
                    "the big read, written as compacted files (0: none)")
    args = ap.parse_args()
    if args.compact:
        figures = compact_figures(args)
        if args.json:
            args.json.write_text(json.dumps(figures, indent=1))
        return
    at = sorted(args.at)
    read_parts = args.boards // 2
    last = max(at[-1], read_parts) + args.appends
    tmp = Path(tempfile.mkdtemp(prefix="boards-ds-", dir=args.dir))
    root, arm, fresh = tmp / "ds", "default", tmp / "fresh"
    (root / f"arm={arm}").mkdir(parents=True)
    figures: dict = {"host": cpu_model(), "size": args.size, "boards": args.boards}
    print(f"host: {figures['host']}; {args.size}x{args.size} boards, 2 a part")
    try:
        syn, sec = timed(lambda: Synthetic(args.size, last))
        print(f"made {2 * last:,} synthetic boards in {sec:.1f} s")
        k, filled = 0, 0.0  # the next restart to write
        fill(syn, args.size, last, fresh, arm, 0, 10)  # a small dataset, appended to alike
        k_fresh = 10
        appends: dict[int, tuple[list[float], list[float]]] = {}
        read_done = False
        for point in at + [None]:
            if not read_done and (point is None or point > read_parts):
                t = time.perf_counter()
                fill(syn, args.size, last, root, arm, k, read_parts)
                k = max(k, read_parts)
                filled += time.perf_counter() - t
                figures["read"] = read_figures(root, syn, k)
                read_done = True
            if point is None:
                break
            t = time.perf_counter()
            if read_done:  # past the boards read: names only (hard links to one part)
                one = part_path(root, arm, 0, 0)
                while k < point:
                    os.link(one, part_path(root, arm, 0, k))
                    k += 1
            fill(syn, args.size, last, root, arm, k, point)
            k = max(k, point)
            filled += time.perf_counter() - t
            os.sync()  # what the filling left to write back: not on the appends' fsyncs
            ms, beside = append_ms(syn, root, arm, k, args.appends, fresh, k_fresh)
            k, k_fresh = k + args.appends, k_fresh + args.appends
            appends[point] = ms, beside
            print(f"append at restart {point:>7,}: {statistics.median(ms):6.2f} ms median, "
                  f"{max(ms):6.2f} ms max ({args.appends} parts, fsynced); each followed "
                  f"by one to a dataset of {k_fresh - args.appends} parts: "
                  f"{statistics.median(beside):6.2f} ms median")
        figures["append_ms"] = {p: {"median": statistics.median(v), "max": max(v),
                                    "small_median": statistics.median(w)}
                                for p, (v, w) in appends.items()}
        figures["filled_seconds"] = filled
        print(f"(the parts in between written directly in {filled:.1f} s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


def read_figures(root: Path, syn: Synthetic, parts: int) -> dict:
    """Read and query the dataset's `parts` parts (module docstring); print each figure."""
    import duckdb

    out: dict = {"parts": parts}
    size = sum(e.stat().st_size for e in os.scandir(root / "arm=default") if e.is_file())
    out["part_bytes"] = size / parts
    print(f"{parts:,} parts of {size / parts / 1e3:.1f} kB each, {size / 1e9:.2f} GB")
    d, sec = timed(lambda: read_boards_dataset(root, syn.inst))
    assert len(d.boards) == 2 * parts, len(d.boards)
    out["read_checked_s"] = sec
    print(f"read {len(d.boards):,} boards ({parts:,} parts), checked with a recount: "
          f"{sec:.1f} s ({sec / parts * 1e3:.2f} ms a part)")
    out["query_view_s"] = {}
    with TablesHandle({"boards": d.table}, str(root), seconds=None) as h:
        for name, q in QUERIES.items():
            rows, sec = timed(lambda q=q: h.sql(q))
            out["query_view_s"][name] = sec
            print(f"  {name:<22} over the checked view: {sec * 1e3:8.1f} ms "
                  f"({rows.num_rows} rows)")
    con = duckdb.connect()
    name = "counts per score"
    direct = QUERIES[name].replace("FROM boards", f"FROM read_parquet('{root}/*/*.parquet', "
                                   f"hive_partitioning = true)")
    rows, sec = timed(lambda: con.sql(direct).to_arrow_table())
    out["query_parquet_s"] = {name: sec}
    print(f"  {name:<22} by read_parquet over the parts, unchecked: {sec:.1f} s "
          f"({rows.num_rows} rows)")
    con.close()
    return out


# compaction ------------------------------------------------------------------------------

def fake_urls(inst, cells: np.ndarray) -> np.ndarray:
    """A URL a board, of the real length and alphabet (the real query's head, a letter per
    side shown, three digits a piece): `board_url` takes 2 ms a 16x16 board."""
    real = board_url(inst, np.maximum(cells[0], 0).astype(np.int64))
    head = real[:real.index("board_edges=") + len("board_edges=")]
    k = len(cells)
    shown = inst.rotated_table()[np.where(cells >= 0, cells, 0)].reshape(k, -1)
    letters = (shown + ord("a")).astype(np.uint8)
    piece = np.where(cells >= 0, cells >> 2, 999).astype(np.int64)
    digits = np.stack([piece // 100, piece // 10 % 10, piece % 10], axis=2).reshape(k, -1)
    mid = np.frombuffer(b"&board_pieces=", np.uint8)
    body = np.concatenate([letters, np.broadcast_to(mid, (k, len(mid))),
                           (digits + ord("0")).astype(np.uint8)], axis=1)
    return np.array([head + row.tobytes().decode() for row in body], dtype=object)


def write_compacted(size: int, root: Path, arm: str, seed: int, first: int, count: int,
                    holes: float) -> int:
    """A compacted file of `count` restarts from `first` (two boards each, as a run with
    fill writes them: random placements, `holes` of the best board's cells free, the
    filled board none), written as a compaction writes it; returns its bytes."""
    from e2store.boards.table import boards_table
    from e2store.files import write_table

    inst = generate_instance(size, size, 4, 8, 0)
    n, k = size * size, 2 * count
    rng = np.random.default_rng([seed, first, ord(arm[0])])
    cells = (np.argsort(rng.random((k, n)), axis=1) * 4 + rng.integers(0, 4, (k, n)))
    free = rng.random((k, n)) < holes
    free[1::2] = False
    cells = np.where(free, -1, cells).astype(np.int16)
    rc = {key: np.concatenate([recount(inst, cells[a:a + 4096])[key]
                               for a in range(0, k, 4096)]) for key in ("matched",
                                                                        "mismatched",
                                                                        "holes")}
    restart = first + np.repeat(np.arange(count), 2)
    stats = {"depth": (n - rc["holes"]).astype(np.int32), "score": rc["matched"].astype(np.int32),
             "joins": np.full(k, inner_joins(size, size), np.int32),
             "mismatches": rc["mismatched"].astype(np.int32),
             "holes": rc["holes"].astype(np.int32), "seed": np.full(k, seed, np.int64),
             "restart": restart.astype(np.int64),
             "nodes": rng.integers(5 * 10**8, 2 * 10**9, k).astype(np.int64),
             "seconds": rng.uniform(15, 25, k), "source": np.array(["best", "filled"] * count,
                                                                   dtype=object),
             "found": 1.8e9 + 20.0 * restart, "url": fake_urls(inst, cells)}
    path = root / f"arm={arm}" / compact_name(seed, first, first + count - 1, count)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_table(path, boards_table(inst, Boards(cells, stats)))
    return path.stat().st_size


def _write_files(size: int, root: Path, jobs: list[tuple]) -> int:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(min(len(jobs), os.cpu_count() or 1),
                             mp_context=mp.get_context("spawn")) as pool:
        return sum(f.result() for f in [pool.submit(write_compacted, size, root, *j)
                                        for j in jobs])


def _measure(kind: str, root: str, size: int) -> tuple[float, int, int, float]:
    """In a fresh process: (seconds, boards or restarts, peak RSS bytes, seconds of the
    report's statistics alone) of reading `root` (`read`) or of the campaign report over
    it (`report`)."""
    import resource

    from e2store.boards import campaign_rows
    from e2store.campaign import campaign_markdown

    inst = generate_instance(size, size, 4, 8, 0)
    t = time.perf_counter()
    if kind == "read":
        n, stats = len(read_boards_dataset(root, inst).boards), 0.0
    else:
        rows = campaign_rows(root, inst)
        t1 = time.perf_counter()
        markdown = campaign_markdown(rows)
        stats = time.perf_counter() - t1
        n = sum(len(r["depth"]) for r in rows.values())
        assert "# Campaign report" in markdown
    return (time.perf_counter() - t, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            * 1024, stats)


def in_fresh_process(*args):
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(_measure, *args).result()


def compact_figures(args) -> dict:
    """The figures of `--compact` (module docstring), printed."""
    size, parts = args.size, args.parts
    figures: dict = {"host": cpu_model(), "size": size, "parts": parts,
                     "million": args.million}
    print(f"host: {figures['host']}; {size}x{size} boards, 2 a restart")
    tmp = Path(tempfile.mkdtemp(prefix="boards-compact-", dir=args.dir))
    try:
        root, arm = tmp / "ds", "default"
        syn, sec = timed(lambda: Synthetic(size, parts))
        t = time.perf_counter()
        fill(syn, size, parts, root, arm, 0, parts)
        print(f"made {parts:,} parts in {sec + time.perf_counter() - t:.1f} s")
        a, sec = timed(lambda: read_boards_dataset(root, syn.inst))
        figures["read_parts_s"] = sec
        print(f"read and check {len(a.boards):,} boards from {parts:,} parts: {sec:.1f} s "
              f"({sec / parts * 1e3:.2f} ms a part)")
        r, sec = timed(lambda: compact_boards_dataset(root, syn.inst, min_parts=1))
        size_c = sum(e.stat().st_size for e in (root / f"arm={arm}").glob("compact-*"))
        figures.update(compact_s=sec, compacted_files=len(r["compacted"]),
                       compacted_bytes=size_c)
        print(f"compact them (each part checked with a recount, {len(r['compacted'])} files "
              f"written and read back, the parts removed): {sec:.1f} s ({sec / parts * 1e3:.2f}"
              f" ms a part); {size_c / 1e6:.1f} MB ({size_c / parts / 1e3:.1f} kB a restart, "
              f"{syn.table.nbytes / parts / 1e3:.1f} kB in memory)")
        b, sec = timed(lambda: read_boards_dataset(root, syn.inst))
        assert np.array_equal(a.boards.cells, b.boards.cells) and all(
            np.array_equal(a.boards.stats[k], b.boards.stats[k]) for k in a.boards.stats)
        figures["read_compacted_s"] = sec
        print(f"read and check the same {len(b.boards):,} boards from the compacted files: "
              f"{sec:.2f} s ({figures['read_parts_s'] / sec:.0f} times faster)")
        del a, b
        if args.million:
            figures.update(million_figures(size, args.million, tmp / "big"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return figures


def million_figures(size: int, boards: int, root: Path) -> dict:
    """`--million` boards as compacted files, read, then reported on (fresh processes)."""
    out: dict = {}
    restarts = boards // 2
    jobs = []
    for arm, holes in (("a", 0.04), ("b", 0.035)):
        mine = restarts // 2 if arm == "a" else restarts - restarts // 2
        for first in range(0, mine, COMPACT_RESTARTS):
            jobs.append((arm, 0, first, min(COMPACT_RESTARTS, mine - first), holes))
    written, sec = timed(lambda: _write_files(size, root, jobs))
    out.update(million_bytes=written, million_files=len(jobs))
    print(f"made {2 * restarts:,} boards ({restarts:,} restarts, 2 arms) as {len(jobs)} "
          f"compacted files, {written / 1e9:.2f} GB, in {sec:.0f} s")
    sec, n, rss, _ = in_fresh_process("read", str(root), size)
    assert n == 2 * restarts, n
    out.update(million_read_s=sec, million_read_rss=rss)
    print(f"read and check {n:,} boards (with a recount): {sec:.1f} s, peak RSS "
          f"{rss / 2**30:.2f} GiB")
    sec, n, rss, stats = in_fresh_process("report", str(root), size)
    assert n == restarts, n
    out.update(million_report_s=sec, million_report_stats_s=stats, million_report_rss=rss)
    print(f"campaign report (campaign_rows, then campaign_markdown) over {2 * n:,} boards "
          f"({n:,} restarts): {sec:.1f} s ({stats:.1f} s of it the statistics), peak RSS "
          f"{rss / 2**30:.2f} GiB")
    return out


if __name__ == "__main__":
    main()

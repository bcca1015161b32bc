"""Count tables: exact corolle counts per zone, sharded, checkpointed and resumable.

This stage writes no store.  A zone's count is split into shards, each a contiguous range
of walk prefixes balanced by the work below them: at hamming 3 the cores and arms of
`e2store.corolles.arms`, else the factorised count of `e2store.corolles.factorised`
(stems times injective
choices of the last ring, by Moebius inversion).  Every finished shard leaves a small JSON
record (written atomically, naming its method), so a killed run resumes where it stopped
and a cluster can run the shards as separate jobs; the zone's count is the sum of its
shards' records.  Records live at

    OUT/<instance id>/h<hamming>/<x>-<y>/shard-<k>-of-<S>.json

and the tables (`corolles_h<h>.csv/.md`, `seconds_h<h>.csv/.md`: a row per zone cell, a
column per board) are built from the records alone.

Distinct counts (`distinct=True`: identical pieces interchangeable, symmetric rotations
merged, `e2store.instance.classes`) walk the distinct corolles instead (the factorised and
arm counts assume every piece distinct) and record the raw count beside them, as
`distinct-shard-<k>-of-<S>.json`; their tables are `distinct_h<h>`, `distinct_raw_h<h>`
and `distinct_seconds_h<h>`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from e2store.corolles.arms import ArmWork, arm_work, count_arm_batches
from e2store.corolles.enumerate import (
    candidate_table,
    choose_prefix_depth,
    corolle_layout,
    count_below,
)
from e2store.corolles.factorised import (
    StemWork,
    balanced_bounds,
    count_batches,
    count_factorised,
    prefix_stems,
    stem_work,
)
from e2store.errors import StoreError
from e2store.files import atomic_write_text
from e2store.instance.classes import DistinctPieces
from e2store.instance.model import Instance
from e2store.reports.tables import (
    COUNT_FORM,
    DISTINCT_COUNT_FORM,
    MISSING,
    Board,
    Crosschecked,
    Table,
    Uncounted,
    Value,
    board_order,
    column_labels,
)
from e2store.zones.zonemap import zone_map

# bump when a count or its split changes: old records are redone
METHOD = "factorised-mobius-2"  # stems and the last ring (e2store.corolles.factorised)
ARM_METHOD = "arms-1"  # hamming 3: cores and arms (e2store.corolles.arms)
DISTINCT_METHOD = "distinct-walk-1"  # distinct corolles walked (e2store.corolles.enumerate)
ARM_HAMMING = 3
BATCHES_PER_SHARD = 64


@dataclass(frozen=True)
class ShardCount:
    """The corolles below one shard's stem prefixes."""

    corolles: int
    stems: int  # stems (cores at hamming 3) with at least one completion
    seconds: float
    prefixes: tuple[int, int]  # [start, end) into the zone's prefix list
    resumed: bool = False  # read back from an earlier run's record
    raw: int | None = None  # a distinct count: the raw corolles its distinct ones stand for


@dataclass(frozen=True)
class ZoneCount:
    """Exact corolle count of one zone, summed over its shards."""

    instance: str
    width: int
    height: int
    x: int
    y: int
    zone: int
    hamming: int
    corolles: int
    stems: int
    seconds: float  # sum over the shards (CPU-side wall time of each shard)
    shards: int
    resumed: int  # shards read back from records
    raw: int | None = None  # a distinct count: the raw corolles


def method_of(hamming: int, distinct: bool = False) -> str:
    """The count method of a hamming (its records carry the name): arms at hamming 3, where
    they are 5-20 times faster than stems (docs/counting.md), else stems; a distinct count
    walks the distinct corolles."""
    if distinct:
        return DISTINCT_METHOD
    return ARM_METHOD if hamming == ARM_HAMMING else METHOD


def _work(instance: Instance, x: int, y: int, hamming: int, shards: int,
          ) -> StemWork | ArmWork:
    """The zone's stem (or core) prefixes, at least 64 per shard: enough for a shard's
    threads to balance (the depth, so the split, depends on `shards` alone)."""
    if method_of(hamming) == ARM_METHOD:
        return arm_work(instance, x, y, shards, 1)
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    return stem_work(instance, layout, shards, 1, symmetric=True)


def _prefixes(work: StemWork | ArmWork) -> np.ndarray:
    return (np.concatenate(work.batches) if work.batches
            else np.zeros((0, max(work.n_stem, 0)), dtype=np.int64))


def shard_bounds(work: StemWork | ArmWork, shards: int) -> np.ndarray:
    """Split the zone's stem (or core) prefixes into `shards` contiguous ranges of about
    equal cost.

    The cost of a prefix is the number of stems (cores) below it (walked by counting, the
    last level counted, not walked), plus one.  Deterministic.
    """
    if shards < 1:
        raise StoreError(f"shards must be >= 1, got {shards}")
    pref = _prefixes(work)
    if len(pref) == 0:
        return np.zeros(shards + 1, dtype=np.int64)
    if work.n_stem > pref.shape[1]:
        weights = prefix_stems(work.layout, work.table, work.n_stem, pref)
    else:
        weights = np.ones(len(pref), dtype=np.int64)
    return balanced_bounds(weights, shards)


def count_shard(instance: Instance, x: int, y: int, hamming: int, shard: int, shards: int,
                *, threads: int = 1, progress: bool = False, distinct: bool = False,
                ) -> ShardCount:
    """Count the corolles at (x, y) below shard `shard` of `shards` of the stem prefixes
    (with `distinct`, the distinct corolles below a share of the distinct walk's prefixes)."""
    if not 0 <= shard < shards:
        raise StoreError(f"shard {shard}/{shards} is out of range (expected 0 <= K < S)")
    t0 = time.perf_counter()
    if distinct:
        return _count_distinct_shard(instance, x, y, hamming, shard, shards, threads, progress,
                                     t0)
    work = _work(instance, x, y, hamming, shards)
    bounds = shard_bounds(work, shards)
    lo, hi = int(bounds[shard]), int(bounds[shard + 1])
    pref = _prefixes(work)[lo:hi]
    n_batches = min(len(pref), BATCHES_PER_SHARD * max(1, threads))
    batches = np.array_split(pref, n_batches) if n_batches else []
    desc = f"count ({x},{y}) h={hamming} shard {shard}/{shards}"
    if isinstance(work, ArmWork):
        total, stems = count_arm_batches(work, batches, threads=threads, progress=progress,
                                         desc=desc)
    else:
        total, stems = count_batches(work, batches, threads=threads, progress=progress,
                                     desc=desc)
    return ShardCount(total, stems, time.perf_counter() - t0, (lo, hi))


def _count_distinct_shard(instance: Instance, x: int, y: int, hamming: int, shard: int,
                          shards: int, threads: int, progress: bool, t0: float) -> ShardCount:
    """A distinct count's shard: an equal share of the distinct walk's prefixes (at least
    BATCHES_PER_SHARD per shard; the split depends on `shards` alone)."""
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    table = candidate_table(instance, layout, True)
    dist = DistinctPieces.of(instance)
    pref, pref_nodes = choose_prefix_depth(layout, table, BATCHES_PER_SHARD * shards, dist)
    bounds = np.linspace(0, len(pref), shards + 1).astype(np.int64)
    lo, hi = int(bounds[shard]), int(bounds[shard + 1])
    total, nodes, raw = count_below(layout, table, pref[lo:hi], dist, threads=threads,
                                    progress=progress,
                                    desc=f"count ({x},{y}) h={hamming} shard {shard}/{shards}")
    nodes += pref_nodes if shard == 0 else 0  # the prefixes' own walk, counted once
    return ShardCount(total, nodes, time.perf_counter() - t0, (lo, hi), raw=raw)


def record_path(out: Path, instance_id: str, hamming: int, x: int, y: int, shard: int,
                shards: int, distinct: bool = False) -> Path:
    name = f"{'distinct-' if distinct else ''}shard-{shard}-of-{shards}.json"
    return Path(out) / instance_id / f"h{hamming}" / f"{x}-{y}" / name


def _identity(instance: Instance, x: int, y: int, hamming: int, shard: int,
              shards: int, distinct: bool = False) -> dict:
    return {"instance": instance.id, "width": instance.width,
            "height": instance.height, "x": x, "y": y, "hamming": hamming, "shard": shard,
            "shards": shards, "method": method_of(hamming, distinct)}


def read_shard(path: Path, identity: dict) -> ShardCount | None:
    """The shard record at `path` if it is complete and for this very count, else None."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or any(rec.get(k) != v for k, v in identity.items()):
        return None
    try:
        return ShardCount(int(rec["corolles"]), int(rec["stems"]), float(rec["seconds"]),
                          (int(rec["prefixes"][0]), int(rec["prefixes"][1])), resumed=True,
                          raw=None if "raw" not in rec else int(rec["raw"]))
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def run_shard(out: Path, instance: Instance, x: int, y: int, hamming: int, shard: int,
              shards: int, *, threads: int = 1, progress: bool = False,
              distinct: bool = False) -> ShardCount:
    """Count one shard unless its record is already there; write the record atomically."""
    identity = _identity(instance, x, y, hamming, shard, shards, distinct)
    path = record_path(out, instance.id, hamming, x, y, shard, shards, distinct)
    done = read_shard(path, identity)
    if done is not None and (done.raw is not None) == distinct:
        return done
    got = count_shard(instance, x, y, hamming, shard, shards, threads=threads,
                      progress=progress, distinct=distinct)
    rec = {**identity, "corolles": got.corolles, "stems": got.stems,
           "seconds": round(got.seconds, 6), "prefixes": list(got.prefixes),
           **({} if got.raw is None else {"raw": got.raw})}
    atomic_write_text(path, json.dumps(rec, indent=1) + "\n")
    return got


def zone_stems(instance: Instance, x: int, y: int, hamming: int) -> int:
    """Stems of a hamming-h zone: its hamming h-1 corolles (one thread), the size of the walk."""
    return count_factorised(instance, x, y, hamming - 1).corolles if hamming >= 1 else 0


def shards_for(stems: int, shard_stems: int, max_shards: int) -> int:
    """Shards for a zone of this many stems: about `shard_stems` each, at least 1, capped."""
    return int(max(1, min(max_shards, math.ceil(stems / max(1, shard_stems)))))


def plan_count_zones(instance: Instance, cells: Iterable[tuple[int, int]], hamming: int,
               shard_stems: int, max_shards: int, max_stems: int | None = None) -> list[dict]:
    """A count plan's zones: `{x, y, shards, stems}` each (stems from hamming 2 up).

    A zone with more than `max_stems` stems is planned with 0 shards: it is out of this
    run's reach and stays uncounted (the tables show it with its stems).
    """
    zones = []
    for x, y in cells:
        if hamming < 2:
            zones.append({"x": x, "y": y, "shards": 1})
            continue
        stems = zone_stems(instance, x, y, hamming)
        over = max_stems is not None and stems > max_stems
        zones.append({"x": x, "y": y, "stems": stems,
                      "shards": 0 if over else shards_for(stems, shard_stems, max_shards)})
    return zones


def uncounted_zones(plans: Iterable[dict]) -> dict[tuple[str, int], dict[tuple[int, int], int]]:
    """`{(instance id, hamming): {(x, y): stems}}` of the zones plans leave out (0 shards)."""
    out: dict[tuple[str, int], dict[tuple[int, int], int]] = {}
    for plan in plans:
        for z in plan["zones"]:
            if z["shards"] == 0:
                key = (plan["instance"], int(plan["hamming"]))
                out.setdefault(key, {})[(int(z["x"]), int(z["y"]))] = int(z.get("stems", 0))
    return out


def count_zone(out: Path, instance: Instance, x: int, y: int, hamming: int, shards: int, *,
               threads: int = 1, progress: bool = False, distinct: bool = False) -> ZoneCount:
    """Count a zone shard by shard (resuming from records), then sum the shards."""
    zone = zone_map(instance.width, instance.height, hamming).zone_at(x, y).id
    parts = [run_shard(out, instance, x, y, hamming, k, shards, threads=threads,
                       progress=progress, distinct=distinct) for k in range(shards)]
    return ZoneCount(instance.id, instance.width, instance.height, x, y, zone,
                     hamming, sum(p.corolles for p in parts), sum(p.stems for p in parts),
                     sum(p.seconds for p in parts), shards, sum(p.resumed for p in parts),
                     sum(p.raw or 0 for p in parts) if distinct else None)


def gather_zone(out: Path, instance: Instance, x: int, y: int, hamming: int,
                shards: int) -> ZoneCount:
    """Sum a zone's shard records; every shard must be there (else a clear error)."""
    missing = []
    parts = []
    for k in range(shards):
        path = record_path(out, instance.id, hamming, x, y, k, shards)
        got = read_shard(path, _identity(instance, x, y, hamming, k, shards))
        if got is None:
            missing.append(k)
        else:
            parts.append(got)
    if missing:
        raise StoreError(f"zone ({x},{y}) h={hamming} of {instance.id}: shard(s) "
                         f"{', '.join(map(str, missing))} of {shards} have no complete record "
                         f"under {Path(out) / instance.id}; run `e2store stage "
                         f"count-shard ... --records DIR --at {x},{y} --hamming {hamming} "
                         f"--shard K/{shards}` first")
    zone = zone_map(instance.width, instance.height, hamming).zone_at(x, y).id
    return ZoneCount(instance.id, instance.width, instance.height, x, y, zone,
                     hamming, sum(p.corolles for p in parts), sum(p.stems for p in parts),
                     sum(p.seconds for p in parts), shards, shards)


def zone_cells(instance: Instance, hamming: int) -> list[tuple[int, int]]:
    """Canonical cells of the board's zones at hamming h, in zone order."""
    return [(z.x, z.y) for z in zone_map(instance.width, instance.height, hamming).zones]


def crosscheck_path(out: Path, instance_id: str, hamming: int, x: int, y: int) -> Path:
    return Path(out) / instance_id / f"h{hamming}" / f"{x}-{y}" / "crosscheck.json"


def write_crosscheck(out: Path, instance: Instance, x: int, y: int, hamming: int,
                     corolles: int, models: dict[str, int | None],
                     seconds: dict[str, float]) -> Path:
    """Record that independent models (`e2store crosscheck`) gave `corolles` at a zone
    cell: the count tables then mark the cell's count as crosschecked."""
    path = crosscheck_path(out, instance.id, hamming, x, y)
    rec = {"instance": instance.id, "width": instance.width, "height": instance.height,
           "x": x, "y": y, "hamming": hamming, "corolles": int(corolles),
           "models": {k: v for k, v in models.items() if v is not None},
           "seconds": {k: round(v, 3) for k, v in seconds.items()}}
    atomic_write_text(path, json.dumps(rec, indent=1) + "\n")
    return path


def _crosschecked(cell_dir: Path, corolles: int) -> tuple[str, ...]:
    """The models whose crosscheck record confirms `corolles` in `cell_dir` (none: ())."""
    try:
        rec = json.loads((cell_dir / "crosscheck.json").read_text())
        models = rec["models"]
        return tuple(sorted(m for m, v in models.items() if int(v) == corolles)) if int(
            rec["corolles"]) == corolles else ()
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return ()


def zone_records(out: Path, instance_id: str, hamming: int,
                 distinct: bool = False) -> Iterator[dict]:
    """Every complete zone result under OUT for an instance and hamming (summed shards);
    with `distinct`, of the distinct counts (with `raw`)."""
    root = Path(out) / instance_id / f"h{hamming}"
    if not root.is_dir():
        return
    pattern = f"{'distinct-' if distinct else ''}shard-*-of-*.json"
    for cell_dir in sorted(root.iterdir()):
        by_shards: dict[int, list[dict]] = {}
        for p in sorted(cell_dir.glob(pattern)):
            try:
                rec = json.loads(p.read_text())
            except (OSError, ValueError):
                continue
            if rec.get("method") == method_of(hamming, distinct):
                by_shards.setdefault(int(rec["shards"]), []).append(rec)
        for shards, recs in sorted(by_shards.items(), reverse=True):
            if sorted(r["shard"] for r in recs) == list(range(shards)):
                total = sum(int(r["corolles"]) for r in recs)
                yield {"x": recs[0]["x"], "y": recs[0]["y"], "shards": shards,
                       "corolles": total,
                       "crosschecked": () if distinct else _crosschecked(cell_dir, total),
                       "seconds": sum(float(r["seconds"]) for r in recs),
                       **({"raw": sum(int(r.get("raw", 0)) for r in recs)} if distinct
                          else {})}
                break


def estimated_zones(estimates: Iterable[dict],
                    ) -> dict[tuple[str, int], dict[tuple[int, int], dict]]:
    """`{(instance id, hamming): {(x, y): estimate}}` of `e2store count-estimate` rows."""
    out: dict[tuple[str, int], dict[tuple[int, int], dict]] = {}
    for e in estimates:
        out.setdefault((e["instance"], int(e["hamming"])), {})[(int(e["x"]), int(e["y"]))] = e
    return out


def count_tables(out: Path, boards: Iterable[tuple[Board, Instance]],
                 hammings: Iterable[int],
                 uncounted: dict[tuple[str, int], dict[tuple[int, int], int]] | None = None,
                 estimates: dict[tuple[str, int], dict[tuple[int, int], dict]] | None = None,
                 distinct: bool = False) -> list[Table]:
    """Corolles and seconds tables (a row per zone cell, a column per board) from records.

    `uncounted` (from `uncounted_zones`) names the zones a plan left out: they show as
    `Uncounted(stems)` instead of MISSING, with the estimate of `estimates` (from
    `estimated_zones`) when there is one.  `distinct`: the tables of the distinct counts
    (metrics distinct, distinct_raw, distinct_seconds).
    """
    metrics = (("distinct", "corolles"), ("distinct_raw", "raw"),
               ("distinct_seconds", "seconds")) if distinct else (
        ("corolles", "corolles"), ("seconds", "seconds"))
    uncounted = uncounted or {}
    estimates = estimates or {}
    pairs = sorted(boards, key=lambda bi: board_order(bi[0]))
    cols = tuple(b for b, _ in pairs)
    labels = column_labels(cols)
    tables = []
    for h in hammings:
        per_board = []
        cells: set[tuple[int, int]] = set()
        for board, inst in pairs:
            zc = set(zone_cells(inst, h))
            recs = {(r["x"], r["y"]): r for r in zone_records(out, board.instance, h, distinct)}
            per_board.append((zc, recs, uncounted.get((board.instance, h), {}),
                              estimates.get((board.instance, h), {})))
            cells |= zc
        order = tuple(sorted(cells, key=lambda c: (c[1], c[0])))
        for metric, key in metrics:
            rows = []
            for cell in order:
                row: list[Value] = []
                for zc, recs, left, est in per_board:
                    if cell not in zc:
                        row.append(None)
                    elif cell in recs:
                        v = recs[cell][key]
                        checked = recs[cell].get("crosschecked") if key == "corolles" else ()
                        row.append(float(v) if key == "seconds" else
                                   Crosschecked(int(v), checked) if checked else int(v))
                    elif cell in left:
                        e = est.get(cell)
                        row.append(Uncounted(left[cell]) if e is None else
                                   Uncounted(left[cell], float(e["corolles"]),
                                             float(e["rel_error"])))
                    else:
                        row.append(MISSING)
                rows.append(tuple(row))
            tables.append(Table(metric, h, DISTINCT_COUNT_FORM if distinct else COUNT_FORM,
                                cols, labels, order, tuple(rows)))
    return tables

"""Count-table runs as the commands ask for them: the plan of a board, its zones counted
shard by shard, the tables gathered from the records (with the plans and estimates that
explain the zones left out), and the shard receipt of a pipeline job (docs/counting.md).

The defaults a run's options share are declared here once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from e2store.errors import StoreError
from e2store.instance.model import Instance

if TYPE_CHECKING:
    from e2store.reports.tables import Board, Table

DEFAULT_SHARD_STEMS = 50_000_000  # stems (hamming h-1 corolles) a shard aims at
DEFAULT_MAX_SHARDS = 64  # shards of one zone at most


def count_board(path: str | Path, inst: Instance) -> Board:
    """The table column of the instance read from `path`: named after the file's stem."""
    from e2store.reports.tables import Board

    return Board(inst.id, Path(path).stem, inst.width, inst.height)


def check_count_plan(plan: Any) -> None:
    """Raise (KeyError, ValueError, TypeError) unless `plan` is a count plan of
    `count_plan`: an instance, a hamming and zones of x, y and shards."""
    for z in plan["zones"]:
        int(z["x"]), int(z["y"]), int(z["shards"])
    plan["instance"], int(plan["hamming"])


def check_estimates(rows: Any) -> None:
    """Raise (KeyError, ValueError, TypeError) unless `rows` are estimate rows of
    `estimate_row`: instance, hamming, x, y, corolles and rel_error each."""
    for e in rows:
        e["instance"], int(e["hamming"]), int(e["x"]), int(e["y"])
        float(e["corolles"]), float(e["rel_error"])


def _stem_limit(max_stems: float | None) -> int | None:
    return None if max_stems is None else int(max_stems)


def count_plan(inst: Instance, hamming: int, at: Sequence = (),
               shard_stems: int = DEFAULT_SHARD_STEMS, max_shards: int = DEFAULT_MAX_SHARDS,
               max_stems: float | None = None) -> dict:
    """The count plan of a board at a hamming: `{instance, hamming, zones}`, a zone per
    cell of `at` (`e2store.zones.board_cells`: every zone's canonical cell by default) with
    its stems and shards (0: left out, more than `max_stems` stems)."""
    from e2store.counts.shards import plan_count_zones
    from e2store.zones.cells import board_cells

    cells = board_cells(inst.width, inst.height, hamming, at)
    return {"instance": inst.id, "hamming": hamming,
            "zones": plan_count_zones(inst, cells, hamming, shard_stems, max_shards,
                                      _stem_limit(max_stems))}


@dataclass(frozen=True)
class TabulatedZone:
    """One zone of a tabulation: the board (and its file's stem `name`), the zone's plan
    entry (`x`, `y`, `shards`, and `stems` from hamming 2 up), and its count (None when the
    plan leaves it out)."""

    name: str
    instance: str
    hamming: int
    plan: dict
    count: Any = None  # e2store.counts.shards.ZoneCount

    @property
    def uncounted(self) -> bool:
        return self.count is None

    def to_dict(self, distinct: bool = False) -> dict:
        """The JSON record `e2store tabulate --json` prints for the zone."""
        x, y, h = self.plan["x"], self.plan["y"], self.hamming
        if self.count is None:
            return {"instance": self.instance, "x": x, "y": y, "hamming": h,
                    "stems": self.plan["stems"], "uncounted": True}
        z = self.count
        return {"instance": self.instance, "x": x, "y": y, "zone": z.zone, "hamming": h,
                "corolles": z.corolles, "stems": z.stems, "shards": self.plan["shards"],
                "resumed": z.resumed, "seconds": round(z.seconds, 6),
                **({"distinct": True, "raw_corolles": z.raw} if distinct else {})}


def tabulate_zones(records: Path, boards: Sequence[tuple[str | Path, Instance]],
                   hammings: Iterable[int], at: Sequence = (),
                   shard_stems: int = DEFAULT_SHARD_STEMS,
                   max_shards: int = DEFAULT_MAX_SHARDS, max_stems: float | None = None,
                   threads: int = 1, distinct: bool = False,
                   progress: bool = False) -> Iterator[TabulatedZone]:
    """Count every planned zone of every board (`(piece file, instance)`) at every hamming
    (each once, in order), shard by shard with records under `records` (a rerun resumes):
    each board planned (`count_plan`) just before its zones are counted; one
    `TabulatedZone` as each zone is done or left out."""
    from e2store.counts.shards import count_zone

    for h in dict.fromkeys(hammings):
        for path, inst in boards:
            plan = count_plan(inst, h, at, shard_stems, max_shards, max_stems)
            for zp in plan["zones"]:
                z = None
                if zp["shards"]:
                    z = count_zone(records, inst, zp["x"], zp["y"], h, zp["shards"],
                                   threads=threads, progress=progress, distinct=distinct)
                yield TabulatedZone(Path(path).stem, inst.id, h, zp, z)


def tabulated_tables(records: Path, boards: Sequence[tuple[str | Path, Instance]],
                     hammings: Iterable[int], zones: Iterable[TabulatedZone],
                     distinct: bool = False) -> list[Table]:
    """The count tables of a tabulation from its records, the zones it left out shown
    uncounted with their stems."""
    from e2store.counts.shards import count_tables, uncounted_zones

    plans = [{"instance": z.instance, "hamming": z.hamming, "zones": [z.plan]} for z in zones]
    return count_tables(records, [(count_board(p, i), i) for p, i in boards],
                        tuple(dict.fromkeys(hammings)), uncounted_zones(plans),
                        distinct=distinct)


def require_zone_records(records: Path, instances: Iterable[Instance],
                         hammings: Iterable[int],
                         spared: dict[tuple[str, int], Any] | None = None) -> None:
    """StoreError naming the zone cells of a board and hamming that have no complete set
    of shard records under `records` (but those `spared`, `{(instance id, hamming):
    cells}`: the zones plans leave out), and what to run for them."""
    from e2store.counts.shards import zone_records
    from e2store.zones.cells import board_cells

    spared = spared or {}
    insts = list(instances)
    for h in dict.fromkeys(hammings):
        for inst in insts:
            done = {(r["x"], r["y"]) for r in zone_records(records, inst.id, h)}
            left = spared.get((inst.id, h), {})
            missing = [c for c in board_cells(inst.width, inst.height, h)
                       if c not in done and c not in left]
            if missing:
                raise StoreError(
                    f"{inst.id} h={h}: zone cell(s) "
                    f"{' '.join(f'{x},{y}' for x, y in missing)} have no complete "
                    f"set of shard records under {records}; run `e2store tabulate` or "
                    f"`e2store stage count-shard` for them first")


def gathered_tables(records: Path, boards: Sequence[tuple[str | Path, Instance]],
                    hammings: Iterable[int], plans: Iterable[dict] = (),
                    estimates: Iterable[dict] = (), require: bool = False) -> list[Table]:
    """The count tables summed from the shard records: the zones `plans` leave out shown
    uncounted (with their estimate among `estimates` rows when there is one); with
    `require`, first a StoreError unless every other zone is complete
    (`require_zone_records`)."""
    from e2store.counts.shards import count_tables, estimated_zones, uncounted_zones

    hs = tuple(dict.fromkeys(hammings))
    left = uncounted_zones(plans)
    est = estimated_zones(estimates)
    if require:
        require_zone_records(records, (i for _, i in boards), hs, left)
    return count_tables(records, [(count_board(p, i), i) for p, i in boards], hs, left, est)


def shard_receipt(records: Path, inst: Instance, at: tuple[int, int], hamming: int,
                  shard: int, shards: int, threads: int = 1,
                  progress: bool = False) -> dict:
    """Count shard `shard` of `shards` of the zone at cell `at` (checked to be on the
    board) and write its record (skipped when already there); the pipeline's receipt."""
    from e2store.counts.shards import run_shard
    from e2store.zones.cells import board_cells

    (x, y), = board_cells(inst.width, inst.height, hamming, ((at,),))
    got = run_shard(records, inst, x, y, hamming, shard, shards, threads=threads,
                    progress=progress)
    return {"instance": inst.id, "x": x, "y": y, "hamming": hamming, "shard": shard,
            "shards": shards, "corolles": got.corolles, "stems": got.stems,
            "resumed": got.resumed, "seconds": round(got.seconds, 6)}


def plan_cells(plan: dict, inst: Instance, hamming: int) -> list[tuple[int, int]]:
    """The cells of the zones a count plan leaves out, row by row: what an estimate run
    covers; ValueError when the plan is of another instance or hamming."""
    from e2store.counts.shards import uncounted_zones

    if plan["instance"] != inst.id or int(plan["hamming"]) != hamming:
        raise ValueError(f"a plan of {plan['instance']} at hamming {plan['hamming']}, not of "
                         f"{inst.id} at hamming {hamming}")
    return sorted(uncounted_zones([plan]).get((inst.id, hamming), {}),
                  key=lambda c: (c[1], c[0]))


def estimate_cells(inst: Instance, hamming: int, cells: Iterable[tuple[int, int]], *,
                   samples: float, tail: int, seed: int = 0, threads: int = 1,
                   progress: bool = False) -> Iterator[tuple[Any, dict]]:
    """Estimate the corolles at each cell (`e2store.corolles.sampling.estimate_count`):
    (the estimate, its row for an estimates file) as each cell is done."""
    from e2store.corolles.sampling import estimate_count

    for x, y in cells:
        e = estimate_count(inst, x, y, hamming, samples=int(samples), tail=tail, seed=seed,
                           threads=threads, progress=progress)
        yield e, {"instance": inst.id, **e.to_dict()}

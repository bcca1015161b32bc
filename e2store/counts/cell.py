"""One cell's exact corolle count by a method asked for: the `e2store count` command's
work, the count tables' method when `auto` (docs/counting.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from e2store.instance.model import Instance

AUTO = "auto"  # the count tables' method at each hamming (`best_method`)
COUNT_METHODS = (AUTO, "enumerate", "factorised", "arms")
DISTINCT_METHOD = "enumerate"  # distinct corolles are walked
# the work each method reports: search nodes, stems (hamming h-1 corolles) or cores
WORK = {"enumerate": "nodes", "factorised": "stems", "arms": "cores"}


def best_method(hamming: int) -> str:
    """The exact method the count tables use at this hamming: arms at hamming 3, else
    factorised (e2store.counts.shards.method_of)."""
    from e2store.counts.shards import ARM_METHOD, method_of

    return "arms" if method_of(hamming) == ARM_METHOD else "factorised"


def resolve_method(method: str, hamming: int, distinct: bool = False) -> str:
    """The method a count runs: `enumerate` for a distinct count, the count tables' method
    for `auto`, else `method` (checked by `check_count_request`)."""
    check_count_request((hamming,), method, distinct)
    if distinct:
        return DISTINCT_METHOD
    return best_method(hamming) if method == AUTO else method


def count_cell(inst: Instance, x: int, y: int, hamming: int, method: str, threads: int = 1,
               progress: bool = False) -> tuple[int, int, float]:
    """(corolles, work, seconds) at one cell by `method` (enumerate, factorised, arms)."""
    if method == "arms":
        from e2store.corolles.arms import count_by_arms

        a = count_by_arms(inst, x, y, threads=threads, progress=progress)
        return a.corolles, a.stems, a.seconds
    if method == "factorised":
        from e2store.corolles.factorised import count_factorised

        f = count_factorised(inst, x, y, hamming, threads=threads, progress=progress)
        return f.corolles, f.stems, f.seconds
    from e2store.corolles.enumerate import count_corolles

    r = count_corolles(inst, x, y, hamming, threads=threads, progress=progress)
    return r.corolles, r.nodes, r.seconds


@dataclass(frozen=True)
class CellCount:
    """One cell's count: where, by which method, the work it reports (`WORK[method]`),
    and for a distinct count the raw corolles its distinct ones stand for."""

    instance: str
    hamming: int
    x: int
    y: int
    zone: int
    method: str
    corolles: int
    work: int
    seconds: float
    raw: int | None = None
    distinct: bool = False

    @property
    def rate(self) -> float:
        """Corolles a second (0 for a count that took no measurable time)."""
        return self.corolles / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict:
        """The JSON record `e2store count --json` prints."""
        return {"instance": self.instance, "x": self.x, "y": self.y, "zone": self.zone,
                "hamming": self.hamming, "method": self.method, "corolles": self.corolles,
                WORK[self.method]: self.work, "seconds": round(self.seconds, 6),
                **({"distinct": True, "raw_corolles": self.raw} if self.distinct else {})}


def check_count_request(hammings: Iterable[int], method: str = AUTO,
                        distinct: bool = False) -> tuple[int, ...]:
    """The hammings to count, each once and in order; ValueError for a method that cannot
    count what is asked (an unknown one, arms away from hamming 3, a distinct count by
    anything but a walk)."""
    out = tuple(dict.fromkeys(hammings))
    if method not in COUNT_METHODS:
        raise ValueError(f"unknown count method {method!r} (expected one of "
                         f"{', '.join(COUNT_METHODS)})")
    if method == "arms" and any(h != 3 for h in out):
        raise ValueError("the arms method counts hamming 3 only")
    if distinct and method not in (AUTO, DISTINCT_METHOD):
        raise ValueError(f"--distinct walks the distinct corolles (enumerate), not {method}")
    return out


def count_cells(inst: Instance, hammings: Iterable[int], at: Sequence = (),
                method: str = AUTO, threads: int = 1, distinct: bool = False,
                progress: bool = False) -> Iterator[CellCount]:
    """Count the corolles exactly at the cells of `at` (`e2store.zones.board_cells`: every
    zone's canonical cell by default) at each hamming (each once, in order), by `method`
    (`resolve_method`); one `CellCount` as each cell is done.  The request and every cell
    are checked (ValueError, ZoneError) before this returns, so before the first count."""
    from e2store.zones.cells import board_cells

    hs = check_count_request(hammings, method, distinct)
    jobs = [(h, board_cells(inst.width, inst.height, h, at)) for h in hs]
    return _count_jobs(inst, jobs, method, threads, distinct, progress)


def _count_jobs(inst: Instance, jobs: list[tuple[int, list[tuple[int, int]]]], method: str,
                threads: int, distinct: bool, progress: bool) -> Iterator[CellCount]:
    from e2store.zones.zonemap import zone_map

    for h, cells in jobs:
        used = resolve_method(method, h, distinct)
        zm = zone_map(inst.width, inst.height, h)
        for x, y in cells:
            raw = None
            if distinct:
                from e2store.corolles.enumerate import count_corolles

                r = count_corolles(inst, x, y, h, threads=threads, progress=progress,
                                   distinct=True)
                corolles, work, seconds, raw = r.corolles, r.nodes, r.seconds, r.raw
            else:
                corolles, work, seconds = count_cell(inst, x, y, h, used, threads, progress)
            yield CellCount(inst.id, h, x, y, int(zm.zone_of[y, x]), used, corolles, work,
                            seconds, raw, distinct)

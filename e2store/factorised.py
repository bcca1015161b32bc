"""Factorised corolle counting: stems (rings 0..h-1) times injective choices of ring h.

Cells of one ring are never adjacent (DESIGN.md section 2), so once the stem is filled each
ring-h cell has its own candidate list; the corolles below a stem are the injective
choices from those lists (pieces distinct from each other and from the stem).  Counting
them never walks the product: candidates whose piece fits no other ring-h cell only
multiply, and only the pieces shared between lists are walked.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from . import _kernels
from .enumerate import (
    CandidateTable,
    Layout,
    _choose_prefix_depth,
    _kernel_args,
    candidate_table,
    corolle_layout,
)
from .errors import ZoneError
from .geometry import n_slots
from .instance import Instance

MAX_HAMMING = 15  # ring h has 4h cells, tracked as bits of an int64


@dataclass(frozen=True)
class FactorisedCount:
    """Exact corolle count at one cell, with the number of stems that have a completion."""

    x: int
    y: int
    hamming: int
    corolles: int
    stems: int
    seconds: float


@dataclass(frozen=True)
class StemWork:
    """The stem walk of one corolle split into prefix batches for the kernels."""

    layout: Layout
    table: CandidateTable
    n_stem: int  # levels of rings 0..h-1; the remaining levels form ring h
    max_bucket: int  # longest candidate list, for the kernels' scratch space
    batches: list[np.ndarray]
    args: tuple


def stem_work(instance: Instance, layout: Layout, threads: int, per_thread: int) -> StemWork:
    """Candidate table, stem size and about `per_thread * threads` prefix batches."""
    if layout.hamming > MAX_HAMMING:
        raise ZoneError(f"hamming {layout.hamming} is too large for the stem kernels "
                        f"(expected h <= {MAX_HAMMING})")
    table = candidate_table(instance, layout)
    inner = n_slots(layout.hamming - 1) if layout.hamming > 0 else 0
    n_stem = int(np.count_nonzero(layout.slot_of < inner))
    sizes = np.diff(table.bstart)
    if n_stem > 1:
        prefixes, _ = _choose_prefix_depth(layout.truncated(n_stem), table,
                                           64 * max(1, threads))
    else:
        prefixes = np.zeros((1, 0), dtype=np.int64)
    batches = (np.array_split(prefixes, min(len(prefixes), per_thread * max(1, threads)))
               if len(prefixes) else [])
    return StemWork(layout, table, n_stem, int(sizes.max()) if len(sizes) else 0, batches,
                    _kernel_args(layout, table))


def count_factorised(instance: Instance, x: int, y: int, hamming: int, *, threads: int = 1,
                     progress: bool = False) -> FactorisedCount:
    """Count the hamming-h corolles at (x, y) from stems and last-ring candidate lists."""
    t0 = time.perf_counter()
    work = stem_work(instance, corolle_layout(instance.width, instance.height, x, y, hamming),
                     threads, 256)
    layout, table, n_stem, max_bucket, batches, args = (
        work.layout, work.table, work.n_stem, work.max_bucket, work.batches, work.args)

    def run(batch: np.ndarray) -> tuple[int, int]:
        c, s = _kernels.count_factorised(batch, n_stem, layout.n_levels, *args,
                                         table.n_pieces, max_bucket)
        return int(c.sum()), int(s.sum())

    total = stems = 0
    with tqdm(total=len(batches), desc=f"factorised ({x},{y}) h={hamming}", unit="batch",
              disable=not progress, delay=1.0, leave=False,
              mininterval=0.5 if sys.stderr.isatty() else 30.0) as bar:
        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            for c, s in pool.map(run, batches):
                total += c
                stems += s
                bar.update()
    return FactorisedCount(x, y, hamming, total, stems, time.perf_counter() - t0)

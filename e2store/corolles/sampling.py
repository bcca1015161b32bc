"""Estimated corolle counts, for the zones exact counting cannot reach in a run.

The exact count of a zone (`e2store.corolles.factorised`, `e2store.corolles.arms`) walks
every stem; at
hamming 3 on 8x8 .. 10x10 and on the Eternity II board that is 1e10 to 1e14 stems and more
(and 10x10's interior zones hold more corolles than int64 can).  `estimate_count` samples
instead, and says how far off it may be:

* *strata*: the stem's first d levels are listed exactly (every prefix of depth d, with
  the centre's turn symmetry as in the exact count), d the deepest with at most
  `samples / PER_STRATUM` prefixes;
* below each prefix, m random paths (Knuth's estimator, kernel `_kernels.sample_paths`)
  go down to `tail` levels above the end of the stem: each level picks one of its f free
  candidates uniformly and the path weighs the product of the f met;
* below each path the corolles are counted exactly (`_kernels.count_factorised`: the last
  `tail` stem levels walked, the last ring factorised, never sampled); the path's value is
  its weight x that count, and its expectation is the count below the prefix;
* estimate = order x sum over prefixes of the mean of their m values (unbiased); standard
  error = order x sqrt(sum of the prefixes' sample variances / m).

The values are heavy-tailed (most paths die or weigh little, a few weigh a lot), so the
standard error is itself an estimate and reads low on small samples: trust it from about
1e6 samples up (docs/counting.md).  When the strata reach the path end (d =
stem levels - tail) nothing is sampled and the result is exact (`exact`, standard error 0).
Uniforms come from numpy's PCG64 seeded by (seed, batch), batches fixed by the strata
alone: the same seed gives the same estimate whatever the threads.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from e2store.corolles import _kernels
from e2store.corolles.defaults import DEFAULT_SAMPLES as DEFAULT_SAMPLES  # declared there
from e2store.corolles.defaults import DEFAULT_TAIL as DEFAULT_TAIL
from e2store.corolles.enumerate import corolle_layout, level_prefixes
from e2store.corolles.factorised import run_batches, stem_work, symmetry_order
from e2store.errors import ZoneError
from e2store.instance.model import Instance

PER_STRATUM = 16  # samples per prefix the strata aim at (at least 2, to estimate variance)
BATCHES = 256  # strata are cut into at most this many batches (their seeds)
CHUNK = 1 << 21  # uniforms drawn at once per batch (16 MB)


@dataclass(frozen=True)
class CountEstimate:
    """An estimated corolle count at one cell (see the module docstring)."""

    x: int
    y: int
    hamming: int
    corolles: float  # the estimate (an integer when `exact`)
    stderr: float  # its standard error (0 when `exact`)
    samples: int  # random paths walked
    strata: int  # prefixes listed exactly (after the symmetry cut)
    depth: int  # their levels
    tail: int  # stem levels counted exactly below each path
    exact: bool
    seed: int
    seconds: float

    @property
    def rel_error(self) -> float:
        """Standard error over the estimate (0 for an exact or empty count)."""
        return self.stderr / self.corolles if self.corolles else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "rel_error": self.rel_error}


def _strata(layout, table, top: int, want: int) -> tuple[np.ndarray, int]:
    """The deepest prefix set of depth <= top with at most `want` prefixes (depth 0 = one
    empty prefix), and its depth."""
    best, depth = level_prefixes(layout, table, 0), 0
    for d in range(1, top + 1):
        pref = level_prefixes(layout, table, d)
        if len(pref) > want:
            break
        best, depth = pref, d
        if not len(pref):
            break
    return best, depth


def estimate_count(instance: Instance, x: int, y: int, hamming: int, *,
                   samples: int = DEFAULT_SAMPLES, tail: int = DEFAULT_TAIL, seed: int = 0,
                   threads: int = 1, progress: bool = False,
                   symmetric: bool = True) -> CountEstimate:
    """Estimate the hamming-h corolles at (x, y) from about `samples` random paths, each
    counted exactly over its last `tail` stem levels."""
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    if tail < 0:
        raise ValueError(f"tail must be at least 0, got {tail}")
    t0 = time.perf_counter()
    layout = corolle_layout(instance.width, instance.height, x, y, hamming)
    work = stem_work(instance, layout, 1, 1)
    n_stem, table = work.n_stem, work.table
    end = max(0, n_stem - tail)  # paths stop here; count_factorised counts below exactly
    strata, depth = _strata(layout, table, end, max(1, samples // PER_STRATUM))
    order = symmetry_order(layout) if symmetric and depth > 0 else 1
    if order > 1:
        strata = strata[(strata[:, 0] & 3) < 4 // order]
    exact = depth == end or not len(strata)  # no prefix at some depth: no corolle
    m = 1 if exact else max(2, -(-samples // max(1, len(strata))))
    batches = np.array_split(strata, min(len(strata), BATCHES)) if len(strata) else []
    nb1, ns1, nb2, ns2, base, n_colours, bstart, cands, colours = work.args
    count_args = (n_stem, layout.n_levels, *work.args, *work.ring)

    def below(paths: np.ndarray) -> np.ndarray:
        """Exact corolles below each path (or prefix)."""
        counts, _ = _kernels.count_factorised(paths, *count_args)
        if (counts < 0).any():
            raise ZoneError(f"estimate ({x},{y}) h={hamming}: a count could leave the "
                            f"64-bit range of the kernels")
        return counts

    def values(batch: np.ndarray, u: np.ndarray) -> np.ndarray:
        """(len(batch), u.shape[1]) sampled values: path weight x exact count below it."""
        paths, weights = _kernels.sample_paths(batch, u, table.n_pieces, nb1, ns1, nb2, ns2,
                                               base, n_colours, bstart, cands, colours)
        live = weights > 0
        out = np.zeros(len(weights))
        out[live] = weights[live] * below(paths[live])
        return out.reshape(len(batch), u.shape[1])

    def run(item: tuple[int, np.ndarray]) -> tuple[int | float, float]:
        """Over the prefixes of batch i: the sum of the means of their m values and the sum
        of their squared deviations, merged chunk by chunk (Chan et al.) so memory stays
        bounded; exact counts when nothing is sampled."""
        i, batch = item
        if exact:
            return sum(int(v) for v in below(batch)), 0.0
        rng = np.random.default_rng([seed, i])
        step = max(1, CHUNK // max(1, len(batch) * (end - depth)))
        n, mean, m2 = 0, np.zeros(len(batch)), np.zeros(len(batch))
        while n < m:
            c = min(step, m - n)
            v = values(batch, rng.random((len(batch), c, end - depth)))
            cm = v.mean(axis=1)
            delta = cm - mean
            m2 += ((v - cm[:, None]) ** 2).sum(axis=1) + delta ** 2 * n * c / (n + c)
            mean += delta * c / (n + c)
            n += c
        return float(mean.sum()), float(m2.sum())

    total, m2 = run_batches(run, list(enumerate(batches)), threads=threads, progress=progress,
                            desc=f"estimate ({x},{y}) h={hamming}")
    seconds = time.perf_counter() - t0
    if exact:
        return CountEstimate(x, y, hamming, order * total, 0.0, len(strata), len(strata),
                             end if not len(strata) else depth, tail, True, seed, seconds)
    total = order * total
    stderr = order * math.sqrt(m2 / (m - 1) / m)
    return CountEstimate(x, y, hamming, total, stderr, m * len(strata), len(strata), depth,
                         tail, False, seed, seconds)

"""The bit intrinsics (e2store.bits) against Python's integers."""

from __future__ import annotations

import numpy as np
from numba import njit

from e2store.bits import atomic_or, ctpop, cttz, prefetch_read, prefetch_write


@njit(cache=False)
def _both(vals):
    out = np.zeros((len(vals), 2), dtype=np.int64)
    for i in range(len(vals)):
        out[i, 0] = ctpop(vals[i])
        out[i, 1] = cttz(vals[i]) if vals[i] != 0 else -1
    return out


def test_popcount_and_trailing_zeros_agree_with_python():
    rng = np.random.default_rng(1)
    vals = np.concatenate([rng.integers(0, 2**63, 500, dtype=np.uint64) << np.uint64(1),
                           rng.integers(0, 2**63, 500, dtype=np.uint64),
                           np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)])
    got = _both(vals)
    for v, (pc, tz) in zip(vals.tolist(), got.tolist(), strict=True):
        assert pc == v.bit_count()
        assert tz == ((v & -v).bit_length() - 1 if v else -1)


@njit(cache=False)
def _or_all(words, idx, vals, hint):
    for i in range(len(idx)):
        if hint:
            prefetch_write(words, idx[i])
            prefetch_read(words, idx[len(idx) - 1 - i])
        atomic_or(words, idx[i], vals[i])
    return words


def test_atomic_or_and_prefetch_set_the_same_bits_as_python():
    rng = np.random.default_rng(2)
    idx = rng.integers(0, 16, 300)
    vals = rng.integers(0, 2**63, 300, dtype=np.uint64) << np.uint64(1)
    want = [0] * 16
    for i, v in zip(idx.tolist(), vals.tolist(), strict=True):
        want[i] |= v
    for hint in (False, True):
        got = _or_all(np.zeros(16, np.uint64), idx, vals, hint)
        assert got.tolist() == want

"""An arm's restarts folded a file at a time (`e2store.campaign.tally`) against the
per-restart arrays: the same analysis, finish and best restarts whatever the split, and a
folded report of a dataset equal to the arrays' (issue 57: a report's memory bounded
whatever the number of restarts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from e2store.campaign import Tally, analyse, tally_chunks
from e2store.campaign.analysis import FinishSummary, finish_summary


def _rows(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    depth = rng.integers(5, 17, n)
    before = rng.integers(10, 25, n)
    finished = rng.random(n) < 0.4
    filled = np.where(finished, before + rng.integers(0, 4, n), before)
    order = np.lexsort((rng.permutation(n), np.zeros(n)))
    seed = np.sort(rng.integers(0, 5, n))
    restart = np.concatenate([np.arange((seed == s).sum()) for s in range(5)])
    return {"depth": depth, "filled": filled, "before": before,
            "finished": finished.astype(np.int64), "nodes": rng.integers(1, 10**6, n),
            "seconds": rng.random(n), "fill_seconds": rng.random(n) / 10,
            "finish_seconds": np.where(finished, rng.random(n) / 20, 0.0),
            "seed": seed[order], "restart": restart[order],
            "url": np.array([f"u{i}" for i in range(n)], dtype=object),
            "cells": np.full(n, 16), "joins": np.full(n, 24)}


def _split(r: dict[str, np.ndarray], rng: np.random.Generator) -> list[dict[str, np.ndarray]]:
    n = len(r["depth"])
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(7, n - 1), replace=False))
    return [{k: v[a:b] for k, v in r.items()} for a, b in
            zip([0, *cuts], [*cuts, n], strict=True)]


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _naive_finish(r: dict[str, np.ndarray]) -> FinishSummary | None:
    """The finish from the arrays, as the report computed it before folding."""
    d = np.asarray(r["finished"], dtype=bool)
    if not d.any():
        return None
    before, after = r["before"][d], r["filled"][d]
    gain = after - before
    top = int(after.max())
    total = float((r["seconds"] + r["fill_seconds"]).sum())
    return FinishSummary(int(d.sum()), float(before.mean()), float(after.mean()),
                         float(gain.mean()), int((gain > 0).sum()), int(gain.max()),
                         int(before.max()), top,
                         [(t, int((before >= t).sum()), int((after >= t).sum()))
                          for t in range(top - 2, top + 1)],
                         float(r["finish_seconds"][d].mean()),
                         float(r["finish_seconds"].sum()) / total)


@pytest.mark.parametrize("seed", range(6))
def test_folded_in_pieces_is_the_arrays_analysis(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = {"a": _rows(rng, 300 + 50 * seed), "b": _rows(rng, 200)}
    chunks = [(arm, None, c) for arm, r in rows.items() for c in _split(r, rng)]
    rng.shuffle(chunks)  # files come in any order
    folded = tally_chunks(chunks)
    assert [t.restarts for t in folded.values()] == [300 + 50 * seed, 200]
    want = analyse(rows, resamples=200, seed=3).to_dict()
    got = analyse(folded, resamples=200, seed=3).to_dict()
    assert _close(got, want)
    for arm, r in rows.items():
        assert _close(finish_summary(folded[arm]).__dict__, _naive_finish(r).__dict__)


def test_best_restarts_are_the_lexsorted_first_with_urls_read_late() -> None:
    rng = np.random.default_rng(9)
    r = _rows(rng, 400)
    order = np.lexsort((r["restart"], r["seed"]))
    s = {k: v[order] for k, v in r.items()}
    first = np.lexsort((np.arange(400), -s["depth"], -s["filled"]))[:3]
    want = [(int(s["seed"][i]), int(s["restart"][i]), s["url"][i]) for i in first]
    chunks = []
    for k, c in enumerate(_split(r, rng)):  # streamed files carry no url: read at the end
        chunks.append(("a", f"file{k}", {key: v for key, v in c.items() if key != "url"}))
    urls = {(int(a), int(b)): u for a, b, u in zip(r["seed"], r["restart"], r["url"],
                                                     strict=True)}
    folded = tally_chunks(chunks, lambda path, sd, rs: urls[(sd, rs)])
    got = [(b["seed"], b["restart"], b["url"]) for b in folded["a"].best_restarts()]
    assert got == want


def test_repeats_from_keys_and_unknown_without_them() -> None:
    r = {"depth": np.array([4, 4, 4, 3]), "filled": np.array([9, 9, 9, 7]),
         "nodes": np.ones(4), "seconds": np.ones(4),
         "key": np.array(["k1", "k1", "k2", ""], dtype=object)}
    t = Tally.of(r)
    assert (t.complete, t.repeats) == (3, 1)
    t.add({k: v for k, v in r.items() if k != "key"})
    assert t.repeats is None  # some rows without their key: repeats not known
    assert analyse({"a": Tally.of(r)}, resamples=20).arms["a"].repeats == 1


def test_a_report_folded_from_a_dataset_equals_the_arrays_report(tmp_path) -> None:
    """`summary --boards`' fold of a dataset (an arm compacted, one in parts), against
    the checked arrays."""
    from naive_best import unsolvable_pieces

    from e2store.boards import open_boards
    from e2store.boards.parts import holder_files
    from e2store.campaign import tally_boards
    from e2store.instance.e2sfile import write_e2store
    from e2store.instance.formats import read_instance
    from e2store.instance.model import Instance
    from e2store.solver.best import solve_best

    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp_path / "u.e2s")
    inst = read_instance(tmp_path / "u.e2s")
    run = {"breaks": "20,24,28,30,32", "restart_nodes": 20000, "finish": False}
    for arm, seed in (("a", 0), ("a", 1), ("b", 0)):
        solve_best(inst, output=tmp_path / "d", arm=arm, seed=seed, restarts=4, **run)
    with open_boards(tmp_path / "d", inst) as h:
        h.compact(arm="a", min_parts=2)
        assert {f.compacted for f in holder_files(tmp_path / "d")} == {True, False}
        want = analyse(h.restarts(checked=True), resamples=100).to_dict()
        folded = tally_boards(h)
        got = analyse(folded, resamples=100).to_dict()
    assert want["restarts"] == 12 and _close(got, want)
    assert all(b["url"] for t in folded.values() for b in t.best_restarts())


def test_spilled_keys_count_as_a_set_does() -> None:
    """The report's keys (DuckDB on disk, two 64-bit halves) against a set, planted
    repeats across chunks and arms; a key that is no key is refused."""
    import hashlib

    from e2store.campaign.tally import MemoryKeys, SpilledKeys
    from e2store.errors import DamagedDataError

    rng = np.random.default_rng(4)
    pool = [hashlib.blake2b(bytes([i, j]), digest_size=16).hexdigest()
            for i in range(40) for j in range(5)]
    with SpilledKeys() as store:
        mem = {a: MemoryKeys() for a in "ab"}
        for _ in range(30):
            arm = "ab"[int(rng.integers(0, 2))]
            keys = np.array([pool[i] for i in rng.integers(0, len(pool), 50)], dtype=object)
            store.add(arm, keys)
            mem[arm].add(keys)
        assert [store.distinct(a) for a in "ab"] == [mem[a].distinct() for a in "ab"]
        assert store.distinct("c") == 0
        t = Tally(keys=store.of("a"))
        r = {"depth": np.ones(2), "filled": np.ones(2), "nodes": np.ones(2),
             "seconds": np.ones(2), "key": np.array(["zz" * 16, ""], dtype=object)}
        with pytest.raises(DamagedDataError, match="f.parquet: damaged boards file"):
            t.add(r, "f.parquet")

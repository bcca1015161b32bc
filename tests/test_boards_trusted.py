"""A report trusts what compaction checked (issue 57): `summary --boards` reads a compacted
file's per-restart columns alone, their pages' checksums and the file's metadata verified
(`open_boards(...).restarts(checked="compacted")`), and checks the parts left in full.  A
compacted file damaged after its compaction still never gives a silent wrong statistic:
300 flips of one byte each, every one either refused in one line naming the file or read
as the same restarts."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest
from naive_best import unsolvable_pieces

from e2store.boards import open_boards
from e2store.boards.dataset import compact_boards_dataset, dataset_parts
from e2store.errors import E2StoreError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 20000, "finish": True}
FLIPS = 300


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trusted")
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp / "u.e2s")
    inst = read_instance(tmp / "u.e2s")
    for arm in ("a", "b"):
        solve_best(inst, output=tmp / "d", arm=arm, restarts=6, **RUN)
    compact_boards_dataset(tmp / "d", inst, min_parts=1)
    solve_best(inst, output=tmp / "d", arm="a", restarts=8, **RUN)  # 8 parts after
    return inst, tmp


def _same(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(set(a[k]) == set(b[k]) and all(
        np.array_equal(np.asarray(a[k][c]), np.asarray(b[k][c])) for c in a[k]) for k in a)


def test_the_trusted_read_equals_the_checked_one(made):
    inst, tmp = made
    h = open_boards(tmp / "d", inst)
    full, trusted = h.restarts(), h.restarts(checked="compacted")
    kinds = {p.path.name.split("-")[0] for p in dataset_parts(tmp / "d")}
    assert kinds == {"compact", "part"}  # both kinds of file
    assert set(full) == set(trusted) == {"a", "b"}
    for arm in full:
        for k, v in full[arm].items():
            if k != "url":
                assert np.array_equal(trusted[arm][k], v), (arm, k)
        assert len(trusted[arm]["depth"]) == (14 if arm == "a" else 6)


def test_flips_in_a_compacted_file_are_refused_or_harmless(made, tmp_path):
    inst, tmp = made
    want = open_boards(tmp / "d", inst).restarts(checked="compacted")
    rng = random.Random(57)
    outcomes = {"refused": 0, "same": 0}
    for k in range(FLIPS):
        d = tmp_path / f"f{k}"
        shutil.copytree(tmp / "d", d)
        target = sorted((d / "arm=a").glob("compact-*.parquet"))[0]
        data = bytearray(target.read_bytes())
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
        target.write_bytes(bytes(data))
        try:
            got = open_boards(d, inst).restarts(checked="compacted")
        except E2StoreError as e:
            assert len(str(e).splitlines()) == 1, e
            outcomes["refused"] += 1
        else:
            assert _same(got, want), f"flip at byte {at} of {len(data)}: a silent wrong answer"
            outcomes["same"] += 1
        shutil.rmtree(d)
    assert outcomes["refused"] > 0 and sum(outcomes.values()) == FLIPS, outcomes

"""Factorised counting against its naive twin, full enumeration and DESIGN.md's example."""

from __future__ import annotations

import itertools
import json

import naive
import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.corolles.enumerate import count_corolles
from e2store.corolles.factorised import count_factorised
from e2store.errors import ZoneError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance

_instance = random_instance


@pytest.mark.parametrize("w,h_board,seed", [(3, 3, 1), (4, 3, 2), (3, 5, 3), (4, 4, 4)])
def test_kernel_agrees_with_naive_twin(w, h_board, seed):
    inst = _instance(w, h_board, seed)
    pieces = [tuple(int(c) for c in p) for p in inst.pieces]
    for h in range(4):
        for y, x in itertools.product(range(h_board), range(w)):
            want = naive.naive_factorised(pieces, w, h_board, x, y, h)
            got = count_factorised(inst, x, y, h)
            assert (got.corolles, got.stems) == want, (x, y, h)


def test_agrees_with_full_enumeration():
    """Every cell where full enumeration stays quick; few colours make many shared pieces."""
    dense = _instance(6, 5, 8, 2, 4)  # 2 frame / 4 inner colours: 654,856 at (2,2) h=1
    cases = [(_instance(5, 4, 21), h, None) for h in range(4)]
    cases += [(dense, h, None) for h in (0, 1)]
    cases += [(dense, 2, [(0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (5, 4)])]
    for inst, h, cells in cases:
        cells = cells or list(itertools.product(range(inst.width), range(inst.height)))
        for x, y in cells:
            a = count_corolles(inst, x, y, h, threads=2).corolles
            assert count_factorised(inst, x, y, h, threads=2).corolles == a, (x, y, h)


def test_threads_do_not_change_the_count():
    inst = _instance(6, 6, 5, 3, 6)
    a = count_factorised(inst, 2, 2, 2, threads=1)
    b = count_factorised(inst, 2, 2, 2, threads=3)
    assert (a.corolles, a.stems) == (b.corolles, b.stems)


def test_design_worked_example(shared_instances):
    inst = read_instance(shared_instances / "benchmark" / "pieces_4x4.txt")
    want = {1: [56, 294, 294, 797], 2: [708, 1268, 1301, 320]}
    for h, counts in want.items():
        got = [count_factorised(inst, x, y, h).corolles for x, y in [(0, 0), (1, 0), (0, 1),
                                                                      (1, 1)]]
        assert got == counts


def test_cli_method_factorised(tmp_path):
    inst = _instance(5, 4, 21)
    path = tmp_path / "i.e2s"
    write_e2store(inst, path)
    out = {}
    for method in ("enumerate", "factorised"):
        r = CliRunner().invoke(main, ["count", str(path), "--hamming", "2", "--at", "all",
                                      "--json", "--method", method])
        assert r.exit_code == 0, r.output
        out[method] = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert [d["corolles"] for d in out["enumerate"]] == [d["corolles"] for d in out["factorised"]]
    assert all(d["method"] == "factorised" and d["stems"] >= 0 for d in out["factorised"])
    assert np.sum([d["corolles"] for d in out["factorised"]]) > 0


def test_too_large_hamming_is_a_clear_error():
    with pytest.raises(ZoneError, match="too large"):
        count_factorised(_instance(3, 3, 1), 1, 1, 16)


@pytest.mark.parametrize("h", [1, 2, 3])
def test_every_prefix_depth_gives_the_same_count(h):
    """The kernel splits at any stem depth: from the centre alone (every parent met by the
    walk), from a depth whose prefixes are parents themselves, down to whole stems (no
    walk); few colours make parents with dead lists and last pieces shared with F."""
    from e2store.corolles import _kernels
    from e2store.corolles.enumerate import corolle_layout, level_prefixes
    from e2store.corolles.factorised import stem_work

    inst = _instance(5, 5, 11, 2, 4)
    for x, y in [(2, 2), (1, 0), (0, 0)]:
        work = stem_work(inst, corolle_layout(5, 5, x, y, h), 1, 1)
        args = (work.n_stem, work.layout.n_levels, *work.args, *work.ring)
        got = set()
        for k in range(work.n_stem + 1):
            pref = level_prefixes(work.layout.truncated(work.n_stem), work.table, k)
            c, s = _kernels.count_factorised(pref, *args)
            got.add((int(c.sum()), int(s.sum())))
        assert len(got) == 1, (x, y, got)
        want = count_corolles(inst, x, y, h, threads=2).corolles
        assert got.pop()[0] == want

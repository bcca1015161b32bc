"""`e2store zones`, `e2store count`, `e2store enumerate` from the command line."""

from __future__ import annotations

import json

import naive
import pytest
from click.testing import CliRunner

from e2store import store
from e2store.cli import main
from e2store.corolles.enumerate import count_corolles
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.zones.zonemap import expected_zone_count, zone_map


@pytest.fixture
def inst_file(tmp_path):
    inst = Instance("cli", 5, 4, naive.random_board_pieces(5, 4, 3, 5, 3))
    path = tmp_path / "cli.e2s"
    write_e2store(inst, path)
    return inst, path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_zones_json_and_grid_agree_with_the_zone_map():
    for n in (4, 5, 6, 7):
        for h in (0, 1, 2, 3):
            r = run("zones", "--size", n, "--hamming", h, "--json")
            assert r.exit_code == 0, r.output
            d = json.loads(r.stdout)
            assert d["n_zones"] == len(zone_map(n, n, h).zones) == expected_zone_count(n, h)
            cells = sorted((x, y) for z in d["zones"] for x, y, _ in z["members"])
            assert cells == sorted((x, y) for x in range(n) for y in range(n))
    r = run("zones", "--size", "6x4", "--hamming", 1)
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert lines[0].startswith("6x4 board, hamming 1:")
    grid = [ln.split() for ln in lines[1:5]]
    zm = zone_map(6, 4, 1)
    for y, row in enumerate(grid):
        assert [int(c.rstrip("bcd")) for c in row] == zm.zone_of[y].tolist()
    assert run("zones", "--size", 4, "--height", 2, "--hamming", 1, "--json").exit_code == 0


def test_count_json_lines_match_the_api(inst_file):
    inst, path = inst_file
    r = run("count", path, "--hamming", 2, "--at", "0,0", "--at", "2,1", "--json",
            "--method", "enumerate")
    assert r.exit_code == 0, r.output
    rows = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert [(d["x"], d["y"]) for d in rows] == [(0, 0), (2, 1)]
    for d in rows:
        want = count_corolles(inst, d["x"], d["y"], 2)
        assert (d["corolles"], d["nodes"]) == (want.corolles, want.nodes)
        assert d["zone"] == zone_map(5, 4, 2).zone_of[d["y"], d["x"]]
    r = run("count", path, "--hamming", 1, "--at", "all", "--json", "--threads", 2)
    assert len(r.output.splitlines()) == 20
    r = run("count", path, "--hamming", 1, "--json")
    assert len(r.output.splitlines()) == len(zone_map(5, 4, 1).zones)
    r = run("count", path, "--hamming", 1, "--hamming", 2, "--json")
    rows = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert [d["hamming"] for d in rows] == ([1] * len(zone_map(5, 4, 1).zones)
                                            + [2] * len(zone_map(5, 4, 2).zones))
    assert {d["method"] for d in rows} == {"factorised"}


@pytest.mark.parametrize("args,msg", [
    (("--at", "5,0"), "off the 5x4 board"),
    (("--at", "1;x"), "bad cell"),
    (("--at", "1,1", "--method", "arms"), "hamming 3 only"),
])
def test_count_bad_cells_exit_2(inst_file, args, msg):
    _, path = inst_file
    r = run("count", path, "--hamming", 1, *args)
    assert r.exit_code == 2 and msg in r.output


def test_enumerate_writes_the_flat_store_and_resumes(inst_file, tmp_path):
    inst, path = inst_file
    out = tmp_path / "st"
    r = run("enumerate", path, "--hamming", 1, "--at", "0,0", "--store", out)
    assert r.exit_code == 0, r.output
    parts = store.read_manifest(out)["partitions"]
    assert {p["zone"] for p in parts} == {0}
    r = run("enumerate", path, "--hamming", 1, "--store", out, "--threads", 2)
    assert r.exit_code == 0
    assert "already complete" in r.output
    parts = store.read_manifest(out)["partitions"]
    assert {p["zone"] for p in parts} == {z.id for z in zone_map(5, 4, 1).zones}


def test_enumerate_bad_instance_is_one_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2 3\n4 5 6 7\n")
    out = tmp_path / "st"
    r = run("enumerate", bad, "--hamming", 1, "--store", out)
    assert r.exit_code == 2
    assert r.output.startswith("e2store: error:") and str(bad) in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not out.exists()

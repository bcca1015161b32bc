"""The library calls behind the thin command line (issue 47): each called directly, and
compared with the command's output where the command prints it."""

from __future__ import annotations

import json

import naive
import pytest
from click.testing import CliRunner

from e2store.cli import main
from e2store.counts import (
    AUTO,
    COUNT_METHODS,
    WORK,
    best_method,
    check_count_request,
    count_cell,
    count_cells,
    resolve_method,
)
from e2store.errors import MissingInstanceError, StoreError, ZoneError
from e2store.instance import instance_id
from e2store.instance.e2sfile import write_e2store
from e2store.instance.model import Instance
from e2store.store import expand_partition, store_instance
from e2store.store.build import enumerate_store
from e2store.zones import ALL, asked_cells, board_cells, zone_ids, zone_map


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def inst_file(tmp_path):
    inst = Instance("lib", 5, 4, naive.random_board_pieces(5, 4, 3, 5, 3))
    path = tmp_path / "lib.e2s"
    write_e2store(inst, path)
    return inst, path


# -- zones ------------------------------------------------------------------------------
def test_board_cells_defaults_to_the_canonical_cells_and_checks_the_board():
    zm = zone_map(5, 4, 1)
    assert board_cells(5, 4, 1) == [(z.x, z.y) for z in zm.zones]
    assert board_cells(5, 4, 1, [((1, 2), (0, 0)), ((3, 3),)]) == [(1, 2), (0, 0), (3, 3)]
    assert board_cells(5, 4, 1, [((1, 2),), ALL]) == [(x, y) for y in range(4)
                                                      for x in range(5)]
    with pytest.raises(ZoneError, match="off the 5x4 board"):
        board_cells(5, 4, 1, [((5, 0),)])
    assert asked_cells([]) == []
    assert asked_cells(["all"]) is None


def test_zone_ids_are_sorted_once_each_and_none_for_every_zone():
    zm = zone_map(6, 6, 1)
    a, b = zm.zones[3], zm.zones[1]
    twin = next(m for m in a.members if (m.x, m.y) != (a.x, a.y))
    assert zone_ids(zm, [((a.x, a.y), (twin.x, twin.y), (b.x, b.y))]) == [1, 3]
    assert zone_ids(zm) is None
    assert zone_ids(zm, [ALL]) is None
    with pytest.raises(ZoneError):
        zone_ids(zm, [((0, 6),)])


# -- counts -----------------------------------------------------------------------------
def test_methods_resolve_as_the_count_tables_do():
    assert COUNT_METHODS[0] == AUTO and set(WORK) == set(COUNT_METHODS) - {AUTO}
    assert best_method(3) == "arms"
    assert best_method(2) == best_method(1) == "factorised"
    assert resolve_method(AUTO, 3) == "arms"
    assert resolve_method("enumerate", 2) == "enumerate"
    assert resolve_method(AUTO, 2, distinct=True) == "enumerate"
    assert check_count_request((2, 1, 2)) == (2, 1)
    with pytest.raises(ValueError, match="hamming 3 only"):
        check_count_request((3, 2), "arms")
    with pytest.raises(ValueError, match="distinct"):
        check_count_request((2,), "factorised", distinct=True)
    with pytest.raises(ValueError, match="unknown"):
        resolve_method("guess", 2)


def test_every_method_counts_the_same(inst_file):
    inst, _ = inst_file
    counts = {m: count_cell(inst, 1, 1, 2, m)[0] for m in ("enumerate", "factorised")}
    assert len(set(counts.values())) == 1
    assert count_cell(inst, 2, 2, 3, "arms")[0] == count_cell(inst, 2, 2, 3, "factorised")[0]


def test_count_cells_matches_the_count_command(inst_file):
    inst, path = inst_file
    got = [c.to_dict() for c in count_cells(inst, (2, 1), [((0, 0), (2, 1))])]
    r = run("count", path, "--hamming", 2, "--hamming", 1, "--at", "0,0 2,1", "--json")
    assert r.exit_code == 0, r.output
    shown = [json.loads(ln) for ln in r.stdout.splitlines()]
    strip = [{k: v for k, v in d.items() if k != "seconds"} for d in (got, shown)[0]]
    assert strip == [{k: v for k, v in d.items() if k != "seconds"} for d in shown]
    assert [(d["hamming"], d["method"]) for d in got] == [(2, "factorised")] * 2 + [
        (1, "factorised")] * 2
    distinct = next(count_cells(inst, (1,), [((0, 0),)], distinct=True))
    assert distinct.method == "enumerate" and distinct.raw is not None
    assert distinct.to_dict()["distinct"] is True


def test_count_cells_checks_every_cell_before_counting(inst_file):
    inst, path = inst_file
    with pytest.raises(ZoneError):
        count_cells(inst, (1,), [((0, 0), (9, 9))])
    r = run("count", path, "--hamming", 1, "--at", "0,0 9,9")
    assert r.exit_code == 2 and "corolles" not in r.output  # no header before the error


# -- instance and store ---------------------------------------------------------------------
def test_instance_id_reads_a_piece_file_or_keeps_an_id(inst_file):
    inst, path = inst_file
    assert instance_id(path) == instance_id(str(path)) == inst.id
    assert instance_id("not-a-file") == "not-a-file"


def test_store_instance_and_expand_partition(inst_file, tmp_path):
    inst, path = inst_file
    root = tmp_path / "store"
    enumerate_store(root, inst, 1, [0], forms=("flat", "cartesian", "distinct"))
    assert store_instance(root) == inst.id
    assert store_instance(root, str(path)) == inst.id
    digests = {f: expand_partition(root, inst.id, 1, 0, 0, f) for f in
               ("flat", "cartesian", "distinct")}
    assert len({p.digest for p in digests.values()}) == 1
    assert digests["flat"].multiplicity is None
    assert int(digests["distinct"].multiplicity.sum()) == len(digests["flat"].cells)
    r = run("expand", "--store", root, "--hamming", 1, "--zone", 0, "--form", "distinct")
    assert r.exit_code == 0, r.output
    assert r.output.strip().endswith(f"sha256 {digests['flat'].digest}")
    other = Instance("other", 4, 4, naive.random_board_pieces(4, 4, 3, 5, 7))
    enumerate_store(root, other, 1, [0])
    with pytest.raises(MissingInstanceError, match="holds 2 instances"):
        store_instance(root)
    r = run("expand", "--store", root, "--hamming", 1, "--zone", 0, "--form", "flat")
    assert r.exit_code == 2 and "give --instance" in r.output and "--help" in r.output
    with pytest.raises((StoreError, FileNotFoundError)):
        expand_partition(tmp_path / "nowhere", inst.id, 1, 0, 0, "flat")


# -- count-table runs -------------------------------------------------------------------
@pytest.fixture
def bench4(shared_instances):
    from e2store.instance.formats import read_instance

    path = shared_instances / "benchmark" / "pieces_4x4.txt"
    return path, read_instance(path)


def test_count_plan_is_the_plan_the_stage_writes(bench4, tmp_path):
    from e2store.counts import DEFAULT_MAX_SHARDS, DEFAULT_SHARD_STEMS, check_count_plan, count_plan

    path, inst = bench4
    plan = count_plan(inst, 2, max_stems=300)
    check_count_plan(plan)
    assert {(z["x"], z["y"]): (z["stems"], z["shards"]) for z in plan["zones"]} == {
        (0, 0): (56, 1), (1, 0): (294, 1), (0, 1): (294, 1), (1, 1): (797, 0)}
    out = tmp_path / "plan.json"
    r = run("stage", "count-plan", path, "--hamming", 2, "--max-stems", 300, "-o", out)
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text()) == plan
    assert count_plan(inst, 2) == count_plan(inst, 2, (), DEFAULT_SHARD_STEMS,
                                             DEFAULT_MAX_SHARDS)
    with pytest.raises(KeyError):
        check_count_plan({"zones": [{"x": 1}]})


def test_tabulate_zones_matches_the_command(bench4, tmp_path):
    from e2store.counts import tabulate_zones, tabulated_tables
    from e2store.reports.tables import table_markdown

    path, inst = bench4
    zones = list(tabulate_zones(tmp_path / "rec", [(path, inst)], (2, 2), max_stems=500))
    assert [z.uncounted for z in zones] == [False, False, False, True]
    assert {z.name for z in zones} == {"pieces_4x4"}
    r = run("tabulate", path, "--hamming", 2, "--max-stems", 500, "--records",
            tmp_path / "rec2", "--json")
    assert r.exit_code == 0, r.output
    shown = [json.loads(ln) for ln in r.stdout.splitlines()]
    mine = [z.to_dict() for z in zones]
    for d in (*shown, *mine):
        d.pop("seconds", None)
        d.pop("resumed", None)
    assert mine == shown
    [corolles, _seconds] = tabulated_tables(tmp_path / "rec", [(path, inst)], (2,), zones)
    assert "| 1 1 | ? (797 stems) |" in table_markdown(corolles)


def test_gathered_tables_require_every_zone_but_those_left_out(bench4, tmp_path):
    from e2store.counts import count_plan, gathered_tables, require_zone_records, tabulate_zones

    path, inst = bench4
    rec = tmp_path / "rec"
    list(tabulate_zones(rec, [(path, inst)], (2,), max_stems=500))
    with pytest.raises(StoreError, match="1,1 have no complete set"):
        require_zone_records(rec, [inst], (2,))
    with pytest.raises(StoreError, match="1,1 have no complete set"):
        gathered_tables(rec, [(path, inst)], (2,), require=True)
    plan = count_plan(inst, 2, max_stems=500)
    tables = gathered_tables(rec, [(path, inst)], (2,), [plan], require=True)
    assert [t.metric for t in tables][:1] == ["corolles"]


def test_shard_receipt_is_what_count_shard_prints(bench4, tmp_path):
    from e2store.counts import shard_receipt

    path, inst = bench4
    got = shard_receipt(tmp_path / "a", inst, (1, 1), 2, 0, 2)
    r = run("stage", "count-shard", path, "--hamming", 2, "--at", "1,1", "--shard", "0/2",
            "--records", tmp_path / "b", "--json")
    assert r.exit_code == 0, r.output
    shown = json.loads(r.stdout)
    assert {k: v for k, v in got.items() if k != "seconds"} == {
        k: v for k, v in shown.items() if k != "seconds"}
    assert shard_receipt(tmp_path / "a", inst, (1, 1), 2, 0, 2)["resumed"]
    with pytest.raises(ZoneError):
        shard_receipt(tmp_path / "a", inst, (4, 0), 2, 0, 2)


def test_plan_cells_and_estimates(bench4):
    from e2store.counts import check_estimates, count_plan, estimate_cells, plan_cells

    path, inst = bench4
    plan = count_plan(inst, 2, max_stems=200)
    assert plan_cells(plan, inst, 2) == [(1, 0), (0, 1), (1, 1)]
    with pytest.raises(ValueError, match="not of"):
        plan_cells(plan, inst, 3)
    [(e, row)] = estimate_cells(inst, 2, [(0, 0)], samples=1e3, tail=1)
    check_estimates([row])
    assert row["instance"] == inst.id and (row["x"], row["y"]) == (0, 0)
    r = run("count-estimate", path, "--hamming", 2, "--at", "0,0", "--samples", "1e3", "--json")
    assert r.exit_code == 0, r.output
    shown = json.loads(r.stdout)
    assert {k: v for k, v in shown.items() if k != "seconds"} == {
        k: v for k, v in row.items() if k != "seconds"}


# -- zones of the store steps -------------------------------------------------------------
def test_board_zone_and_zone_rotations():
    from e2store.zones import board_zone, zone_rotations

    zm = zone_map(6, 6, 2)
    z = board_zone(6, 6, 2, 1)
    assert z == zm.zones[1]
    with pytest.raises(ZoneError, match=f"zones 0..{len(zm.zones) - 1}"):
        board_zone(6, 6, 2, len(zm.zones))
    assert zone_rotations(z) == list(z.rotations)
    assert zone_rotations(z, turned_only=True) == list(z.rotations[1:])
    assert zone_rotations(z, (3, 1, 3)) == [1, 3]


# -- reports --------------------------------------------------------------------------------
def test_summary_files_and_instance_selection(inst_file, tmp_path):
    from e2store.instance import instance_ids
    from e2store.reports import format_markdown, summarize, write_summary

    inst, path = inst_file
    root = tmp_path / "store"
    enumerate_store(root, inst, 1, None)
    assert instance_ids([]) is None
    assert instance_ids([path, "x"]) == [inst.id, "x"]
    result = summarize(root, instance_ids([path]))
    write_summary(tmp_path / "s.json", result)
    write_summary(tmp_path / "s.md", result)
    assert json.loads((tmp_path / "s.json").read_text()) == result
    assert (tmp_path / "s.md").read_text() == format_markdown(result)
    r = run("summary", "--store", root)
    assert r.exit_code == 0 and r.output == format_markdown(result)


def test_verify_and_repair_says_each_step(inst_file, tmp_path):
    from e2store.reports import repair_commands, verify_and_repair

    inst, _ = inst_file
    root = tmp_path / "store"
    enumerate_store(root, inst, 1, None)
    lines: list[str] = []
    assert verify_and_repair(root, log=lines.append).ok and lines == []
    victim = max(root.glob("flat/**/*.parquet"), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x10
    victim.write_bytes(bytes(data))
    report = verify_and_repair(root)
    assert not report.ok and repair_commands(root, report)
    report = verify_and_repair(root, repair=True, log=lines.append)
    assert report.ok
    assert lines[0].startswith("DAMAGED ") and any(ln.startswith("repaired: ") for ln in lines)
    bare = tmp_path / "bare"  # no manifest and no record: not a store, unless repaired
    (bare / "instances").mkdir(parents=True)
    with pytest.raises(StoreError):
        verify_and_repair(bare)
    lines.clear()
    assert verify_and_repair(bare, repair=True, log=lines.append).ok
    assert lines == [f"repaired: rewrote {bare / 'manifest.json'} from the records"]


def test_drawings():
    from e2store.errors import RenderError
    from e2store.instance import generate_instance
    from e2store.reports import board_grid, corolle_picture, nth_corolle

    inst = generate_instance(5, 4, 2, 3, 1)
    svg = corolle_picture(inst, 1, 2, 1, 0)
    assert svg.startswith("<svg") and f"{inst.name}: hamming-1 corolle 0 at (2, 1)" in svg
    assert "my title" in corolle_picture(inst, 1, 2, 1, 0, title="my title")
    assert nth_corolle(inst, 2, 1, 1, 0).dtype.kind == "i"
    assert (board_grid(inst, solution=False) == -1).all()
    assert (board_grid(inst) == inst.solution).all()
    bare = Instance("bare", inst.width, inst.height, inst.pieces)
    with pytest.raises(RenderError, match="f.e2s: the instance has no solution"):
        board_grid(bare, name="f.e2s")


# -- instance files -------------------------------------------------------------------------
def test_write_generated_instance(tmp_path):
    from e2store.instance import read_instance, write_generated_instance

    out = tmp_path / "g.e2s"
    inst, stats, notes = write_generated_instance(out, 4, 4, 2, 2, 1)
    assert read_instance(out).id == inst.id and inst.name == "g"
    assert stats["colours"] >= 3 and isinstance(notes, list)
    r = run("generate-instance", "--size", 4, "--frame-colours", 2, "--inner-colours", 2,
            "--seed", 1, "-o", tmp_path / "h.e2s", "--name", "g")
    assert r.exit_code == 0 and inst.id in r.output
    with pytest.raises(ValueError, match="too small"):
        write_generated_instance(tmp_path / "x.e2s", 1, 4, 2, 2, 1)
    assert not (tmp_path / "x.e2s").exists()


# -- queries --------------------------------------------------------------------------------
def test_sql_rows_stream_what_sql_prints(inst_file, tmp_path):
    from e2store.query import QUERY_SECONDS, sql_rows

    inst, _ = inst_file
    root = tmp_path / "store"
    enumerate_store(root, inst, 1, None)
    query = "SELECT zone, count(*) AS n FROM corolles GROUP BY zone ORDER BY zone"
    with sql_rows(root, query, 1 << 30, QUERY_SECONDS) as (names, batches):
        rows = [r for b in batches for r in b]
    assert names == ["zone", "n"] and rows
    r = run("sql", "--store", root, query, "--json")
    assert r.exit_code == 0, r.output
    assert [json.loads(ln) for ln in r.stdout.splitlines()] == rows
    with pytest.raises(StoreError), sql_rows(root, "SELECT * FROM nowhere", 1 << 30) as _:
        pass


def test_export_store_closures_reads_the_store_copy(inst_file, tmp_path):
    from e2store.query import export_store_closures

    inst, _ = inst_file
    root = tmp_path / "store"
    enumerate_store(root, inst, 1, None)
    entries = export_store_closures(root, inst.id, 1, [(1, 1), (1, 1)], tmp_path / "out")
    assert [(e["x"], e["y"]) for e in entries] == [(1, 1)]
    assert (tmp_path / "out" / "regions.json").is_file()
    with pytest.raises(MissingInstanceError, match="no instance 'nope'"):
        export_store_closures(root, "nope", 1, [(1, 1)], tmp_path / "out2")


def _default(command, name: str):
    return next(p for p in command.params if p.name == name).default


def test_the_options_read_the_library_defaults():
    from e2store.cli import corolles, counts, instance, query, render
    from e2store.counts import DEFAULT_MAX_SHARDS, DEFAULT_SHARD_STEMS
    from e2store.instance.formats import FORMATS
    from e2store.instance.url import ORDERS, WRITE_ORDER
    from e2store.query import QUERY_SECONDS
    from e2store.reports import DEFAULT_SCALE

    assert _default(corolles.count, "method") == AUTO
    method = next(p for p in corolles.count.params if p.name == "method")
    assert tuple(method.type.choices) == COUNT_METHODS
    for cmd in (counts.tabulate, counts.count_plan):
        assert _default(cmd, "shard_stems") == DEFAULT_SHARD_STEMS
        assert _default(cmd, "max_shards") == DEFAULT_MAX_SHARDS
    assert _default(query.sql, "seconds") == QUERY_SECONDS
    assert _default(render.render_corolle, "scale") == DEFAULT_SCALE
    assert _default(instance.url, "order") == WRITE_ORDER
    order = next(p for p in instance.url.params if p.name == "order")
    assert set(order.type.choices) == set(ORDERS)
    to = next(p for p in instance.export_pieces.params if p.name == "to_format")
    assert set(to.type.choices) == set(FORMATS)


# -- the defaults the commands show and the boards they choose: the library's -----------
def test_enumerate_forms_are_flat_unless_asked(inst_file, tmp_path):
    from e2store.store.build import enumerate_forms
    from e2store.store.defaults import DEFAULT_FORMS

    assert enumerate_forms() == DEFAULT_FORMS == ("flat",)
    assert enumerate_forms((), distinct=True) == ("distinct",)
    assert enumerate_forms(("prefix", "cartesian")) == ("prefix", "cartesian")
    assert enumerate_forms(("flat",), distinct=True) == ("flat", "distinct")
    _, path = inst_file
    for args, want in (((), {"flat"}), (("--distinct",), {"distinct"})):
        root = tmp_path / f"st{len(args)}"
        r = run("enumerate", path, "--hamming", 1, "--store", root, *args)
        assert r.exit_code == 0, r.output
        assert {f for f in ("flat", "prefix", "cartesian", "distinct")
                if (root / f).is_dir()} == want


def test_stage_plan_and_serve_defaults_are_the_library_s(inst_file):
    import inspect

    from e2store.cli import serve, stages
    from e2store.store.defaults import DEFAULT_MAX_SHARDS, DEFAULT_SHARD_COROLLES
    from e2store.store.stages import plan_zones
    from e2store.web.defaults import SQL_SECONDS

    assert _default(stages.plan, "shard_corolles") == DEFAULT_SHARD_COROLLES == 50_000_000
    assert _default(stages.plan, "max_shards") == DEFAULT_MAX_SHARDS == 64
    params = inspect.signature(plan_zones).parameters
    assert params["shard_corolles"].default == DEFAULT_SHARD_COROLLES
    assert params["max_shards"].default == DEFAULT_MAX_SHARDS
    assert _default(serve.serve, "sql_seconds") == SQL_SECONDS == 10.0
    inst, path = inst_file
    r = run("stage", "plan", path, "--hamming", 2, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert (doc["shard_corolles"], doc["max_shards"]) == (DEFAULT_SHARD_COROLLES,
                                                          DEFAULT_MAX_SHARDS)
    assert ([(z["zone"], z["corolles"], z["shards"]) for z in doc["zones"]]
            == [(z.zone, z.corolles, z.shards) for z in plan_zones(inst, 2)])
    try:
        from e2store.web import data
    except ImportError:  # no web extra
        return
    assert data.SQL_SECONDS is SQL_SECONDS


@pytest.fixture
def solved(tmp_path):
    """A 4x4 instance with its solution, its piece file, and boards of it: the solution
    with 3 holes, with 1 hole, and whole."""
    from e2store.instance.generate import generate_instance

    inst = generate_instance(4, 4, 2, 3, seed=3, name="g4")
    path = tmp_path / "g4.e2s"
    write_e2store(inst, path)
    full = inst.solution.reshape(-1).astype("int64")
    boards = []
    for holes in (3, 1, 0):
        b = full.copy()
        b[:holes] = -1
        boards.append(b)
    return inst, path, boards


def test_chosen_solution_is_what_url_prints(solved, tmp_path):
    import numpy as np

    from e2store.boards.solutions import chosen_solution, write_solutions
    from e2store.errors import SolverError
    from e2store.instance.url import board_url

    inst, path, boards = solved
    sols = tmp_path / "s.parquet"
    write_solutions(sols, np.stack(boards[1:]), inst)
    assert chosen_solution(inst) is inst.solution
    assert np.array_equal(chosen_solution(inst, sols), boards[1])
    assert np.array_equal(chosen_solution(inst, sols, 1), boards[2])
    for args, board in (((), inst.solution), (("--solutions", sols), boards[1]),
                        (("--solutions", sols, "--index", 1), boards[2])):
        r = run("url", path, *args)
        assert r.exit_code == 0 and r.stdout.strip() == board_url(inst, board), r.output
    with pytest.raises(SolverError, match="holds 2 solutions, no index 2"):
        chosen_solution(inst, sols, 2)
    other = tmp_path / "o.parquet"
    write_solutions(other, np.zeros((1, 9), dtype=np.int64))
    with pytest.raises(SolverError, match="boards of 9 cells, the instance has 16"):
        chosen_solution(inst, other)


def test_chosen_board_is_what_render_board_draws(solved, tmp_path):
    import numpy as np

    from e2store.boards.solutions import write_solutions
    from e2store.boards.sources import best_row, chosen_board, is_boards_file
    from e2store.boards.table import make_boards, read_boards, recount, write_boards
    from e2store.errors import RenderError

    inst, path, boards = solved
    rc = recount(inst, np.stack(boards))
    stats = [{"depth": 16 - int(rc["holes"][k]), "score": int(rc["matched"][k]), "joins": 24,
              "mismatches": int(rc["mismatched"][k]), "holes": int(rc["holes"][k]),
              "seed": 0, "restart": k, "nodes": k, "seconds": 0.0,
              "source": "filled" if k == 2 else "best"} for k in range(3)]
    bf = tmp_path / "b.parquet"
    write_boards(bf, inst, make_boards(16, boards, stats))
    assert best_row(read_boards(bf, inst)) == 2  # the filled board
    assert best_row(make_boards(16, boards[:2], stats[:2])) == 1  # else the deepest
    assert best_row(make_boards(16, [], [])) is None
    sols = tmp_path / "s.parquet"
    write_solutions(sols, np.stack(boards), inst)
    assert is_boards_file(bf) and not is_boards_file(sols)
    assert not is_boards_file("https://e2.bucas.name/#puzzle=x")

    cells, what, note = chosen_board(inst, bf, best=True)
    assert np.array_equal(cells, boards[2]) and what == "row 2 (the best of 3), "
    assert note.startswith("drew row 2 of 3, the best: filled, score 24 / 24, depth 16")
    r = run("render", "board", path, "--best", bf, "-o", tmp_path / "b.svg")
    assert r.exit_code == 0 and r.output.splitlines()[0] == note, r.output
    cells, what, note = chosen_board(inst, sols, best=True)  # no boards file: best score
    assert np.array_equal(cells, boards[2]) and note.startswith("drew board 2 of 3, the best")
    cells, what, note = chosen_board(inst, bf, index=1)
    assert np.array_equal(cells, boards[1]) and what == note == ""
    with pytest.raises(RenderError, match="holds 3 boards"):
        chosen_board(inst, bf, index=3)

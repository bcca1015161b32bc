"""The query layer against numpy computations on the same partitions."""

from __future__ import annotations

import json

import duckdb
import naive
import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

import e2store
from e2store import store
from e2store.cli import main
from e2store.errors import MissingInstanceError, MissingZoneError, StoreError
from e2store.instance.model import Instance
from e2store.zones.zonemap import zone_map


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("q")
    inst = Instance("q", 5, 4, naive.random_board_pieces(5, 4, 3, 5, 21))
    store.enumerate_store(root, inst, 1, None, forms=("flat",))
    store.enumerate_store(root, inst, 2, None, forms=("flat", "cartesian"))
    return root, inst


def test_views_agree_with_the_manifest(built):
    root, inst = built
    with e2store.connect(root) as st:
        man = store.read_manifest(root)["partitions"]
        got = {(r["hamming"], r["zone"], r["rotation"]): r["n"] for r in st.sql(
            "SELECT hamming, zone, rotation, count(*) AS n FROM corolles GROUP BY ALL"
        ).to_pylist()}
        assert got == {(p["hamming"], p["zone"], p["rotation"]): p["rows"]
                       for p in man if p["form"] == "flat"}
        types = dict(zip(*st.sql("DESCRIBE corolles").select(["column_name", "column_type"])
                         .to_pydict().values(), strict=True))
        assert types["hamming"] == "INTEGER" and types["instance"] == "VARCHAR"
        zs = st.zone_stats(inst.id, 2).to_pylist()
        zm = zone_map(5, 4, 2)
        assert [(r["zone"], r["x"], r["y"], r["cells"]) for r in zs] == [
            (z.id, z.x, z.y, len(z.members)) for z in zm.zones]
        for r in zs:
            assert r["corolles"] == store.read_partition(root, inst.id, 2, r["zone"], 0)[0].shape[0]
            assert r["flat_bytes"] > 0 and r["cartesian_bytes"] > 0 and r["prefix_bytes"] is None
        stems = st.sql("SELECT zone, sum(corolles) AS n FROM stems WHERE rotation = 0 "
                       "GROUP BY zone ORDER BY zone").to_pylist()
        assert [r["n"] for r in stems] == [r["corolles"] for r in zs]
        assert st.sql("SELECT * FROM instances").to_pylist() == [
            {"instance": inst.id, "name": "q", "width": 5, "height": 4, "pieces": 20}]


def test_cardinality_and_frontier_distribution(built):
    root, inst = built
    with e2store.connect(root) as st:
        zm = zone_map(5, 4, 2)
        turned = next((z.id, r) for z in zm.zones for r in z.rotations if r)
        for zone, rot in [(3, 0), turned]:
            # the cartesian shortcut and the flat scan agree
            h1 = st.cardinality(inst.id, 1, zone if zone < 6 else 0, 0).to_pylist()
            c1, _ = store.read_partition(root, inst.id, 1, zone if zone < 6 else 0, 0)
            assert [r["pieces"] for r in h1] == [
                len(np.unique(c1[:, i][c1[:, i] >= 0] >> 2)) for i in range(c1.shape[1])]
            cells, front = store.read_partition(root, inst.id, 2, zone, rot)
            card = st.cardinality(inst.id, 2, zone, rot).to_pylist()
            want = []
            for i in range(cells.shape[1]):
                col = cells[:, i][cells[:, i] >= 0]  # off-board slots count 0
                want.append({"slot": i, "pieces": len(np.unique(col >> 2)),
                             "placements": len(np.unique(col))})
            assert card == want
            dist = st.frontier_distribution(inst.id, 2, zone, rot).to_pylist()
            want_d = sorted((f, int(c), int((front[:, f] == c).sum()))
                            for f in range(front.shape[1]) for c in np.unique(front[:, f]))
            assert [(d["position"], d["colour"], d["corolles"]) for d in dist] == want_d


@pytest.mark.parametrize("x, y, h", [(0, 0, 2), (2, 1, 2), (4, 3, 1)])
def test_frontier_sql_gives_the_walks_frontier(built, x, y, h):
    """Format 3 stores no frontier: `frontier_sql` over the slot columns gives, row by
    row, the frontier the walk kernel writes (`walk_chunks`), off-board sides -1."""
    from e2store.corolles.enumerate import candidate_table, corolle_layout, walk_chunks
    from e2store.query import frontier_sql

    _, inst = built
    layout = corolle_layout(inst.width, inst.height, x, y, h)
    chunks = list(walk_chunks(layout, candidate_table(inst, layout), 1 << 16))
    cells = np.concatenate([c for c, _ in chunks], axis=1)
    front = np.concatenate([f for _, f in chunks], axis=1)
    rows = pa.table({f"s{i}": c for i, c in enumerate(cells)})  # noqa: F841 (DuckDB reads it)
    got = duckdb.sql(f"SELECT {', '.join(frontier_sql(inst, h))} FROM rows").fetchnumpy()
    assert len(got) == front.shape[0] and cells.shape[1] > 0
    for i, col in enumerate(front):
        assert got[f"f{i}"].tolist() == col.tolist(), i


@pytest.mark.parametrize("pick", [0, 1, -1])
def test_compatible_lookups_cartesian_and_flat(built, pick):
    root, inst = built
    zone, rot = [(z.id, r) for z in zone_map(5, 4, 2).zones for r in z.rotations][pick]
    cells, _ = store.read_partition(root, inst.id, 2, zone, rot)
    rng = np.random.default_rng(zone)
    with e2store.connect(root) as st:
        for _ in range(6):
            row = cells[rng.integers(len(cells))]
            on = np.nonzero(row >= 0)[0]
            fixed = {int(k): int(row[k]) for k in rng.choice(on, size=min(2, len(on)),
                                                               replace=False)}
            forbidden = [int(p) for p in rng.choice(20, size=3, replace=False)]
            keep = np.ones(len(cells), bool)
            for k, v in fixed.items():
                keep &= cells[:, k] == v
            keep &= ~(np.isin(cells >> 2, forbidden) & (cells >= 0)).any(axis=1)
            want = set(map(tuple, cells[keep].tolist()))
            got_c = st.compatible(inst.id, 2, zone, rot, fixed=fixed, forbidden=forbidden)
            rows_c = set(zip(*[got_c.column(i).to_pylist() for i in range(got_c.num_columns)],
                             strict=True))
            assert rows_c == want
        # the flat scan (hamming 1 has no cartesian partitions) agrees too
        c1, _ = store.read_partition(root, inst.id, 1, 0, 0)
        got_f = st.compatible(inst.id, 1, 0, 0, fixed={0: int(c1[0, 0])}, limit=3)
        assert got_f.num_rows == min(3, int((c1[:, 0] == c1[0, 0]).sum()))


def test_missing_things_are_typed_errors(built):
    root, inst = built
    with e2store.connect(root) as st:
        with pytest.raises(MissingZoneError, match="--form cartesian") as e:
            st.probe_partition(inst.id, 1, 0, 0, "cartesian")
        assert isinstance(e.value, KeyError)
        assert st.get_partition(inst.id, 1, 0, 0, "cartesian", default="none") == "none"
        with pytest.raises(MissingInstanceError, match="no instance 'x'"):
            st.probe_partition("x", 1, 0)
        with pytest.raises(MissingZoneError):
            st.cardinality(inst.id, 3, 0)
        with pytest.raises(StoreError, match="query failed"):
            st.sql("SELECT nope FROM corolles")
    with pytest.raises(StoreError, match="no manifest"):
        e2store.connect(root / "nothing")


def test_streams_nulls_and_cursors_per_thread(built):
    """`sql(stream=True)` gives the table's rows in batches; each thread's `cursor()` sees
    every view and runs beside the others."""
    import threading

    root, inst = built
    q = "SELECT * FROM corolles ORDER BY ALL"
    with e2store.connect(root) as st:
        whole = st.sql(q)
        reader = st.sql(q, stream=True, batch_rows=64)
        batches = list(reader)
        assert len(batches) > 1 and pa.Table.from_batches(batches).equals(whole)
        stats = st.sql("SELECT * FROM zone_stats ORDER BY ALL")
        got: dict[int, list] = {}

        def work(k: int) -> None:
            with st.cursor() as cur:
                got[k] = [cur.sql(q).num_rows == whole.num_rows and
                          cur.sql("SELECT * FROM zone_stats ORDER BY ALL").equals(stats)
                          for _ in range(5)]

        threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == {k: [True] * 5 for k in range(3)}
    run = CliRunner().invoke
    q = "SELECT NULL AS a, 1 AS b UNION ALL SELECT 'x', NULL"
    r = run(main, ["sql", "--store", str(root), q])
    assert r.exit_code == 0 and r.output.count("NULL") == 2 and "(2 rows)" in r.output
    assert run(main, ["sql", "--store", str(root), q, "--csv"]).output == "a,b\n,1\nx,\n"
    assert [json.loads(x) for x in run(main, ["sql", "--store", str(root), q,
                                              "--json"]).stdout.splitlines()] == [
        {"a": None, "b": 1}, {"a": "x", "b": None}]
    r = run(main, ["sql", "--store", str(root), "SELECT CAST(s0 || 'x' AS INTEGER) FROM corolles"])
    assert r.exit_code == 2 and r.output.startswith("e2store: error:"), r.output


def test_sql_cli_and_database_file(built, tmp_path):
    root, inst = built
    run = CliRunner().invoke
    r = run(main, ["sql", "--store", str(root), "SELECT hamming, count(*) AS n FROM corolles "
                   "GROUP BY hamming ORDER BY hamming", "--json"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    with e2store.connect(root) as st:
        want = st.sql("SELECT hamming, count(*) AS n FROM corolles GROUP BY hamming "
                      "ORDER BY hamming").to_pylist()
    assert rows == want
    r = run(main, ["sql", "--store", str(root), "SELECT 1 AS a, 'x' AS b", "--csv"])
    assert r.output == "a,b\n1,x\n"
    r = run(main, ["sql", "--store", str(root), "SELECT 1 AS a"])
    assert "(1 row)" in r.output
    r = run(main, ["sql", "--store", str(root), "SELECT nope FROM corolles"])
    assert r.exit_code == 2 and r.output.startswith("e2store: error:")
    db = tmp_path / "s.duckdb"
    other = tmp_path / ".s.duckdb.tmp"  # another writer's work in progress: left alone
    other.write_bytes(b"not ours")
    assert run(main, ["build-db", "--store", str(root), "-o", str(db)]).exit_code == 0
    assert other.read_bytes() == b"not ours"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".s.")) == [
        other.name]
    con = duckdb.connect(str(db), read_only=True)
    con.execute(f"SET file_search_path = '{root}'")  # the views' paths are the store's
    assert con.execute("SELECT count(*) FROM corolles").fetchone()[0] == sum(
        p["rows"] for p in store.read_manifest(root)["partitions"] if p["form"] == "flat")
    assert con.execute("SELECT count(*) FROM zone_stats").fetchone()[0] == (
        len(zone_map(5, 4, 1).zones) + len(zone_map(5, 4, 2).zones))


@pytest.mark.parametrize("query", [
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_parquet('{root}/**/*.parquet')",
    "SELECT * FROM glob('{root}/*')",
    "COPY (SELECT 1) TO '{root}/manifest.json'",
    "COPY (SELECT 1) TO '{outside}'",
    "ATTACH '{outside}' AS other",
    "EXPORT DATABASE '{outside}'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "RESET lock_configuration",
])
def test_sql_is_confined_to_the_views(built, tmp_path, query):
    """The query layer reads the store through its views only: no file read or write (the
    store's own files included), no extension, and the lock cannot be lifted."""
    root, _ = built
    manifest = (root / "manifest.json").read_bytes()
    outside = tmp_path / "out.csv"
    q = query.format(root=root, outside=outside)
    with e2store.connect(root) as st, pytest.raises(StoreError, match="query failed"):
        st.sql(q)
    r = CliRunner().invoke(main, ["sql", "--store", str(root), q])
    assert r.exit_code == 2 and r.output.startswith("e2store: error:"), r.output
    assert "Traceback" not in r.output
    assert (root / "manifest.json").read_bytes() == manifest and not outside.exists()
    with e2store.connect(root) as st:  # the views still work
        assert st.sql("SELECT count(*) FROM corolles").column(0)[0].as_py() > 0

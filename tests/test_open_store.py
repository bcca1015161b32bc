"""An open store: plain Parquet and DuckDB tools read it right (the docs' one-liners, run as
written), `e2store.dataset` gives each form, `build-db` moves with the store and sees
partitions added later, and a version-1 store is refused, then migrated (issue 22)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import naive
import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import Killed, kill_at_replace

import e2store
from e2store import store
from e2store.cli import main
from e2store.errors import StoreError, StoreVersionError
from e2store.instance.model import Instance
from e2store.store.read import FORM_SCHEMA
from e2store.store.verify import verify_store

DOC = Path(__file__).resolve().parent.parent / "docs" / "store-format.md"
FORMS3 = ("flat", "prefix", "cartesian")


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    root = tmp_path_factory.mktemp("open") / "store"
    inst = Instance("o", 5, 4, naive.random_board_pieces(5, 4, 3, 5, 21))
    for h in (1, 2):
        store.enumerate_store(root, inst, h, None, forms=FORMS3)
    want = {p["zone"]: p["corolles"] for p in store.read_manifest(root)["partitions"]
            if p["form"] == "flat" and p["hamming"] == 2 and p["rotation"] == 0}
    return root, inst, want


def _one_liners() -> list[tuple[str, str]]:
    """(language, code) of each fenced block between the docs' one-liner markers."""
    text = DOC.read_text()
    part = text[text.index("<!-- one-liners: start -->"):text.index("<!-- one-liners: end -->")]
    return re.findall(r"```(\w+)\n(.*?)```", part, re.S)


def _per_zone(result) -> dict[int, int]:
    """{zone: count} from what a one-liner gives: rows of pairs, an Arrow or polars table."""
    if isinstance(result, pa.Table):
        result = zip(*(c.to_pylist() for c in result.columns), strict=True)
    elif hasattr(result, "rows"):  # polars
        result = result.rows()
    return {int(z): int(n) for z, n in result}


def test_the_docs_hold_every_tool():
    tools = [code.split("\n")[0] for _, code in _one_liners()]
    assert len(tools) == 5 and any("polars" in t for t in tools)


@pytest.mark.parametrize("k", range(5))
def test_docs_one_liners_give_exactly_one_form(opened, k):
    root, _, want = opened
    lang, code = _one_liners()[k]
    code = code.replace("STORE", str(root))
    if lang == "sh":
        if shutil.which("duckdb") is None:
            pytest.skip("the duckdb shell is not installed (pip install duckdb-cli)")
        out = subprocess.run(code.replace("duckdb -c", "duckdb -csv -noheader -c", 1),
                             shell=True, capture_output=True, text=True, check=True).stdout
        assert _per_zone(csv.reader(io.StringIO(out))) == want
        return
    if "polars" in code:
        pytest.importorskip("polars")
    *body, last = code.strip().split("\n")
    scope: dict = {}
    exec("\n".join(body), scope)
    assert _per_zone(eval(last, scope)) == want


def test_dataset_gives_each_form_under_its_schema(opened):
    root, inst, _ = opened
    parts = store.read_manifest(root)["partitions"]
    for form in FORMS3:
        for h in (1, 2, None):
            d = e2store.dataset(root, form, h)
            rows = sum(p["rows"] for p in parts if p["form"] == form and h in (None, p["hamming"]))
            assert d.count_rows() == rows, (form, h)
            assert d.schema.names == FORM_SCHEMA[form](h or 2).names + [
                "instance", "hamming", "zone", "rotation"]
            if h is not None:  # the plain directory holds exactly the listed files
                plain = ds.dataset(root / form / f"hamming={h}", partitioning="hive")
                assert plain.count_rows() == rows
    t = e2store.dataset(root, "flat", 2).to_table(
        filter=(ds.field("zone") == 1) & (ds.field("rotation") == 0))
    cells, _ = store.read_partition(root, inst.id, 2, 1, 0)
    assert t.column("s0").to_pylist() == cells[:, 0].tolist()
    low = e2store.dataset(root, "flat").to_table(filter=ds.field("hamming") == 1)
    assert low.column("s12").null_count == len(low) > 0  # hamming 1 has no slot 12
    with pytest.raises(StoreError, match="unknown form"):
        e2store.dataset(root, "flats")


def _small(root: Path, zones, forms=("flat", "cartesian")) -> Instance:
    inst = Instance("m", 4, 4, naive.random_board_pieces(4, 4, 3, 4, 5))
    store.enumerate_store(root, inst, 1, zones, forms=forms)
    return inst


def _flat_rows(root: Path) -> int:
    return sum(p["rows"] for p in store.read_manifest(root)["partitions"] if p["form"] == "flat")


def test_build_db_moves_with_the_store_and_sees_new_partitions(tmp_path, monkeypatch):
    first = tmp_path / "a" / "store"
    _small(first, [0])
    run = CliRunner().invoke
    db, script = tmp_path / "s.duckdb", tmp_path / "views.sql"
    for out in (db, script):
        assert run(main, ["build-db", "--store", str(first), "-o", str(out)]).exit_code == 0
    root = tmp_path / "b" / "moved"
    root.parent.mkdir()
    shutil.move(first, root)
    inst = _small(root, None)  # partitions added after build-db
    n, zones = _flat_rows(root), len(store.read_manifest(root)["partitions"]) // 2
    con = duckdb.connect(str(db), read_only=True)
    con.execute(f"SET file_search_path = '{root}'")
    assert con.execute("SELECT count(*) FROM corolles").fetchone()[0] == n
    assert con.execute("SELECT count(*) FROM manifest WHERE form = 'flat'").fetchone()[0] == zones
    assert con.execute("SELECT count(*) FROM stems").fetchone()[0] > 0
    assert con.execute("SELECT instance FROM instances").fetchall() == [(inst.id,)]
    con.close()
    monkeypatch.chdir(root)  # the script runs from the store
    con = duckdb.connect()
    con.execute(script.read_text())
    assert con.execute("SELECT sum(corolles) FROM zone_stats").fetchone()[0] == sum(
        p["corolles"] for p in store.read_manifest(root)["partitions"]
        if p["form"] == "flat" and p["rotation"] == 0)
    if shutil.which("duckdb") is None:
        pytest.skip("the duckdb shell is not installed (pip install duckdb-cli)")
    out = subprocess.run(["duckdb", str(db), "-csv", "-noheader", "-c",
                          "SELECT count(*) FROM corolles"], cwd=root, capture_output=True,
                         text=True)
    assert out.returncode == 0 and int(out.stdout) == n, out.stderr


def _to_version_2(root: Path, inst: Instance) -> None:
    """Write a store's flat and distinct files as version 2 did: the frontier columns `f*`
    (int8, nullable, from the naive twin's rule: the colour a frontier side's placement
    shows) after the slots, dictionary-encoded, format version 2 in files, records and
    manifest; independently of the migration."""
    from e2store.zones.geometry import frontier_layout

    colours = inst.rotated_table()
    for rec_path in sorted(root.glob("*/hamming=*/instance=*/zone=*/rotation=*/_partition*.json")):
        rec = json.loads(rec_path.read_text())
        rec["format_version"] = 2
        rec.pop("digest")
        if rec["form"] in ("flat", "distinct"):
            fslots, fsides = frontier_layout(rec["hamming"])
            for f in rec["files"]:
                path = rec_path.parent / f["file"]
                t = pq.read_table(path)
                meta = {**t.schema.metadata, b"e2store.format_version": b"2"}
                cols = [t.column(n) for n in t.column_names if n.startswith("s")]
                fields = [pa.field(n, pa.int16()) for n in t.column_names if n.startswith("s")]
                for i, (a, b) in enumerate(zip(fslots, fsides, strict=True)):
                    cells = t.column(f"s{a}").to_pylist()
                    cols.append(pa.array([-1 if c < 0 else int(colours[c, b]) for c in cells],
                                         pa.int8()))
                    fields.append(pa.field(f"f{i}", pa.int8()))
                if "multiplicity" in t.column_names:
                    cols.append(t.column("multiplicity"))
                    fields.append(pa.field("multiplicity", pa.int64()))
                pq.write_table(pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=meta)),
                               path, compression="zstd", use_dictionary=True,
                               write_page_checksum=True)
                f["bytes"] = path.stat().st_size
                f["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        rec_path.write_text(json.dumps(rec))
    m = json.loads((root / "manifest.json").read_text())
    m["format_version"] = 2
    m.pop("digest")
    for p in m["partitions"]:
        p["format_version"] = 2
        p.pop("digest")
    (root / "manifest.json").write_text(json.dumps(m))


def _to_version_3(root: Path) -> None:
    """Write a store's JSON files as version 3 did: no digest, keys in the writer's order."""
    for rec_path in sorted(root.glob("*/hamming=*/instance=*/zone=*/rotation=*/_partition*.json")):
        rec = json.loads(rec_path.read_text())
        rec.pop("digest")
        rec_path.write_text(json.dumps({**rec, "format_version": 3}, indent=1))
    m = json.loads((root / "manifest.json").read_text())
    m.pop("digest")
    for p in m["partitions"]:
        p["format_version"] = 3
        p.pop("digest")
    (root / "manifest.json").write_text(json.dumps({**m, "format_version": 3}, indent=1))


def _to_version_1(root: Path) -> None:
    """Lay a version-2 store out as version 1 did (every form of a partition in one
    directory, the instance beside them), independently of the migration."""
    for rec in sorted(root.glob("*/hamming=*/instance=*/zone=*/rotation=*/_partition*.json")):
        d = rec.parent
        kv = dict(x.split("=") for x in d.relative_to(root).parts[1:])
        old = (root / f"instance={kv['instance']}" / f"hamming={kv['hamming']}"
               / f"zone={kv['zone']}" / f"rotation={kv['rotation']}")
        old.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():
            f.rename(old / f.name)
    for form in FORMS3:
        shutil.rmtree(root / form, ignore_errors=True)
    for f in (root / "instances").iterdir():
        f.rename(root / f"instance={f.stem}" / "instance.e2s")
    (root / "instances").rmdir()
    m = json.loads((root / "manifest.json").read_text())
    m["format_version"] = 1
    for p in m["partitions"]:
        p["path"] = (f"instance={p['instance']}/hamming={p['hamming']}/zone={p['zone']}/"
                     f"rotation={p['rotation']}")
    (root / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("start", [1, 2, 3])
def test_old_store_is_refused_then_migrated(tmp_path, monkeypatch, start):
    """A version-1, -2 or -3 store (frontier columns, old layout for 1, JSON files without
    a digest for all) is refused, then migrated, killed at several renames and run again:
    the result verifies, reads the same rows, and its JSON files are byte for byte those
    of the store written as version 4 directly (the same data checksum too)."""
    pristine = tmp_path / "v4"
    inst = _small(pristine, None, forms=("flat", "cartesian", "distinct"))
    checksum = store.read_manifest(pristine)["checksum"]
    want = {f: store.read_partition(pristine, inst.id, 1, 1, 0, f) for f in ("flat", "cartesian")}
    want_d = store.read_distinct(pristine, inst.id, 1, 1, 0)
    old = tmp_path / "old"
    shutil.copytree(pristine, old)
    if start == 3:
        _to_version_3(old)
    else:
        _to_version_2(old, inst)
        assert all("f0" in pq.read_schema(p).names for p in old.rglob("part-*.parquet"))
    if start == 1:
        _to_version_1(old)
    jsons = {p.relative_to(pristine): p.read_bytes() for p in pristine.rglob("*.json")}
    with pytest.raises(StoreVersionError, match=f"e2store migrate --store {old}"):
        e2store.connect(old)
    with pytest.raises(StoreVersionError, match="e2store migrate"):
        store.enumerate_store(old, inst, 2, [0])
    r = CliRunner().invoke(main, ["sql", "--store", str(old), "SELECT 1"])
    assert r.exit_code == 2 and "e2store migrate" in r.output
    for k in (1, 4, 9, 15):  # killed after k-1 renames, then run again
        root = tmp_path / f"k{k}"
        shutil.copytree(old, root)
        kill_at_replace(monkeypatch, k)
        with pytest.raises(Killed):
            store.migrate_store(root)
        monkeypatch.undo()
        r = CliRunner().invoke(main, ["migrate", "--store", str(root)])
        assert r.exit_code == 0, r.output
        assert verify_store(root).ok
        assert store.read_manifest(root)["checksum"] == checksum  # same bytes, same paths
        assert {p.relative_to(root): p.read_bytes() for p in root.rglob("*.json")} == jsons
        for f, rows in want.items():
            got = store.read_partition(root, inst.id, 1, 1, 0, f)
            assert all((a == b).all() for a, b in zip(got, rows, strict=True))
        got = store.read_distinct(root, inst.id, 1, 1, 0)
        assert all((a == b).all() for a, b in zip(got, want_d, strict=True))
        assert not list(root.glob("instance=*"))
        assert not [n for p in root.glob("flat/**/*.parquet")
                    for n in pq.read_schema(p).names if n.startswith("f")]
    r = CliRunner().invoke(main, ["migrate", "--store", str(root)])
    assert r.exit_code == 0 and "nothing to do" in r.output


def _region_reader() -> dict:
    """The docs' region reader, run as written (it imports pyarrow only)."""
    text = DOC.read_text()
    part = text[text.index("<!-- region-reader: start -->"):
                text.index("<!-- region-reader: end -->")]
    scope: dict = {}
    exec(re.findall(r"```python\n(.*?)```", part, re.S)[0], scope)
    return scope


def test_closure_export_read_by_the_documented_reader(opened, tmp_path):
    from e2store.zones.zonemap import zone_map

    root, inst, _ = opened
    out = tmp_path / "closures"
    cells = [(0, 0), (2, 1), (4, 3)]
    r = CliRunner().invoke(main, ["export-closures", "--store", str(root), "--hamming", "2",
                                  *[a for x, y in cells for a in ("--at", f"{x},{y}")],
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    reader = _region_reader()
    listed = json.loads((out / "regions.json").read_text())
    assert [(e["x"], e["y"]) for e in listed["regions"]] == cells
    zm = zone_map(inst.width, inst.height, 2)
    for x, y in cells:
        rows, index = reader["open_region"](str(out), x, y)
        cells_, front = store.read_partition(root, inst.id, 2, zm.zone_at(x, y).id,
                                             zm.rotation_at(x, y))
        want = sorted(map(tuple, np.hstack([cells_, front]).tolist()))
        got = []
        F = front.shape[1]
        for key in zip(*(index.column(f"f{i}").to_pylist() for i in range(F)), strict=True):
            part = reader["completions"](rows, index, key)
            assert len(part) > 0 and all(  # every row under a key has that frontier
                part.column(f"f{i}").to_pylist() == [key[i]] * len(part) for i in range(F))
            got += list(zip(*(c.to_pylist() for c in part.columns), strict=True))
        assert sorted(got) == want and len(got) == rows.num_rows
        assert len(reader["completions"](rows, index, (99,) * F)) == 0
        meta = rows.schema.metadata
        assert json.loads(meta[b"cells"])[0] == [x, y] and meta[b"e2store.hamming"] == b"2"
    r = CliRunner().invoke(main, ["export-closures", "--store", str(root), "--hamming", "3",
                                  "--at", "0,0", "-o", str(tmp_path / "none")])
    assert r.exit_code == 2 and "e2store enumerate" in r.output


def test_big_results_as_arrow_ipc(opened, tmp_path):
    from e2store.files import read_table
    from e2store.instance.url import board_url

    root, inst, _ = opened
    run = CliRunner().invoke
    out = tmp_path / "z.arrow"
    r = run(main, ["expand", "--store", str(root), "--hamming", "2", "--zone", "1", "--form",
                   "cartesian", "-o", str(out)])
    assert r.exit_code == 0, r.output
    cells, front = store.read_partition(root, inst.id, 2, 1, 0)
    t = read_table(out)
    assert pa.ipc.open_file(pa.memory_map(str(out))).num_record_batches == 1
    assert t.column("s0").to_pylist() == cells[:, 0].tolist()
    src = tmp_path / "o.e2s"
    from e2store.instance.e2sfile import write_e2store
    write_e2store(inst, src)
    ops = tmp_path / "ops.arrow"
    r = run(main, ["openings", str(src), "--store", str(root), "--hamming", "1", "--at", "2,2",
                   "-o", str(ops)])
    assert r.exit_code == 0, r.output
    sols = tmp_path / "s.arrow"
    r = run(main, ["solve", str(src), "--openings", str(ops), "-o", str(sols), "--json"])
    assert r.exit_code == 0, r.output
    direct = json.loads(run(main, ["solve", str(src), "--no-symmetry-break", "--json"]).stdout)
    assert json.loads(r.stdout)["solutions"] == direct["solutions"]
    if direct["solutions"]:
        r = run(main, ["url", str(src), "--solutions", str(sols)])
        assert r.exit_code == 0 and r.output.startswith("https://e2.bucas.name/")
    assert read_table(sols).schema.metadata[b"format"] == b"e2store-solutions"
    assert board_url(inst).endswith("000" * 20)

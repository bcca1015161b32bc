"""The main job: `e2store summary` against an independent recount, the config schema, and an
end-to-end Snakemake run on a tiny config."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import naive
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from e2store import store
from e2store.cli import main
from e2store.enumerate import count_corolles
from e2store.errors import StoreError
from e2store.formats import read_instance
from e2store.instance import Instance
from e2store.summary import format_markdown, summarize
from e2store.zones import zone_map

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "schemas" / "config.schema.yaml"


def _instance(w=5, h=4, seed=21, n_frame=3, n_inner=5, name=None) -> Instance:
    return Instance(name or f"rnd{seed}", w, h,
                    naive.random_board_pieces(w, h, n_frame, n_inner, seed))


def _on_disk(root: Path, inst: Instance, h: int) -> dict:
    """Recount one instance and hamming from the files on disk and the enumerator itself."""
    base = root / f"instance={inst.id}" / f"hamming={h}"
    zm = zone_map(inst.width, inst.height, h)
    metas = sorted(base.glob(f"zone=*/rotation=*/{store.PARTITION_META}"))
    files = sorted(base.glob("zone=*/rotation=*/*.parquet"))
    digest = hashlib.sha256()
    by_part = sorted(files, key=lambda f: (int(f.parts[-3].split("=")[1]),
                                           int(f.parts[-2].split("=")[1]), f.name))
    for f in by_part:
        rel = f.relative_to(root).as_posix()
        digest.update(f"{rel} {hashlib.sha256(f.read_bytes()).hexdigest()}\n".encode())
    rot0 = [json.loads(m.read_text()) for m in metas if m.parent.name == "rotation=0"]
    return {
        "size": f"{inst.width}x{inst.height}",
        "zones": len(zm.zones),
        "partitions": len(metas),
        "corolles": sum(count_corolles(inst, z.x, z.y, h).corolles for z in zm.zones),
        "corolles_all_cells": sum(count_corolles(inst, x, y, h).corolles
                                  for y in range(inst.height) for x in range(inst.width)),
        "rows": sum(pq.ParquetFile(f).metadata.num_rows for f in files),
        "bytes": sum(f.stat().st_size for f in files),
        "nodes": sum(m["nodes"] for m in rot0),
        "seconds": sum(m["seconds"] for m in rot0),
        "checksum": digest.hexdigest(),
    }


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    root = tmp_path_factory.mktemp("store")
    a, b = _instance(), _instance(4, 4, seed=5, n_frame=2, n_inner=3, name="sq")
    for h in (1, 2):
        store.enumerate_store(root, a, h, None)
    store.enumerate_store(root, b, 1, None)
    return root, a, b


def test_summary_matches_an_independent_recount(small_store):
    root, a, b = small_store
    s = summarize(root)
    assert s["checksum"] == store.read_manifest(root)["checksum"]
    assert [(e["instance"], e["hamming"]) for e in s["entries"]] == sorted(
        [(a.id, 1), (a.id, 2), (b.id, 1)])
    for e in s["entries"]:
        inst = a if e["instance"] == a.id else b
        want = _on_disk(root, inst, e["hamming"])
        got = {k: e[k] for k in want}
        got["seconds"] = pytest.approx(want["seconds"], abs=1e-5)
        assert got == want, (e["instance"], e["hamming"])
        assert e["complete"] and e["zones_expected"] == e["zones"]
        assert (e["width"], e["height"]) == (inst.width, inst.height)
        assert e["name"] == inst.name
        assert e["bytes_per_row"] == pytest.approx(want["bytes"] / want["rows"], abs=1e-3)
    t = s["totals"]
    for k in ("partitions", "corolles", "corolles_all_cells", "rows", "bytes", "nodes"):
        assert t[k] == sum(e[k] for e in s["entries"])


def test_summary_selection_and_markdown(small_store):
    root, a, b = small_store
    s = summarize(root, [a.id], [2])
    assert [(e["instance"], e["hamming"]) for e in s["entries"]] == [(a.id, 2)]
    assert summarize(root, hammings=[1])["totals"]["corolles"] == sum(
        e["corolles"] for e in summarize(root)["entries"] if e["hamming"] == 1)
    with pytest.raises(StoreError, match=f"instance={b.id} hamming=2"):
        summarize(root, [a.id, b.id], [2])
    md = format_markdown(summarize(root))
    assert md.startswith("# e2store summary")
    rows = [ln for ln in md.splitlines() if ln.startswith(f"| {a.id} ")]
    assert len(rows) == 2 and f"| {summarize(root, [a.id], [1])['entries'][0]['corolles']:,} |" \
        in rows[0]


def test_summary_command_writes_atomically_and_selects_by_file(small_store, tmp_path):
    root, a, _ = small_store
    inst_file = root / f"instance={a.id}" / "instance.e2s"
    md, js = tmp_path / "out" / "s.md", tmp_path / "out" / "s.json"
    r = CliRunner().invoke(main, ["summary", str(root), "-o", str(md), "--json", str(js),
                                  "--instance", str(inst_file), "--hamming", "1"])
    assert r.exit_code == 0, r.output
    got = json.loads(js.read_text())
    assert got == json.loads(json.dumps(summarize(root, [a.id], [1])))
    assert md.read_text() == format_markdown(got)
    assert sorted(p.name for p in md.parent.iterdir()) == ["s.json", "s.md"]  # no temp files
    r = CliRunner().invoke(main, ["summary", str(root), "--hamming", "1"])
    assert r.exit_code == 0 and r.output.startswith("# e2store summary")


def test_summary_of_a_store_without_manifest_is_one_error_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "e2store.cli", "summary", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no manifest" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- config schema


def _validate(cfg: dict) -> dict:
    from snakemake.utils import validate

    cfg = copy.deepcopy(cfg)
    validate(cfg, str(SCHEMA))
    return cfg


def test_default_config_is_valid_and_defaults_are_filled():
    cfg = _validate(yaml.safe_load((REPO / "config.yaml").read_text()))
    assert cfg["hamming"] == [1, 2] and cfg["instances"] == {}
    sizes = {tuple(map(int, str(d["size"]).split("x"))) for d in cfg["demo_instances"].values()}
    assert any(w == h for w, h in sizes) and any(w != h for w, h in sizes)
    assert cfg["forms"] == ["flat", "prefix", "cartesian"]
    assert _validate({}) == {"results": "results", "threads": 1, "hamming": [1, 2],
                             "forms": ["flat"], "demo_instances": {}, "instances": {}}


GOOD_DEMO = {"size": "5x5", "frame_colours": 3, "inner_colours": 4, "seed": 1}


@pytest.mark.parametrize("bad", [
    {"unknown_key": 1},
    {"forms": ["flat", "zip"]},
    {"threads": 0},
    {"hamming": []},
    {"hamming": [1, 1]},
    {"hamming": [-1]},
    {"results": ""},
    {"demo_instances": {"d": {**GOOD_DEMO, "size": "5by5"}}},
    {"demo_instances": {"d": {k: v for k, v in GOOD_DEMO.items() if k != "seed"}}},
    {"demo_instances": {"d": {**GOOD_DEMO, "seed": -1}}},
    {"demo_instances": {"d": {**GOOD_DEMO, "frame_colours": 0}}},
    {"demo_instances": {"d": {**GOOD_DEMO, "colour": 3}}},
    {"demo_instances": {"bad name": GOOD_DEMO}},
    {"instances": {"x": 3}},
])
def test_config_schema_rejects_bad_configs(bad):
    from snakemake.exceptions import WorkflowError

    _validate({"demo_instances": {"d": GOOD_DEMO}})
    with pytest.raises(WorkflowError):
        _validate({"demo_instances": {"d": GOOD_DEMO}, **bad})


# --------------------------------------------------------------------------- end to end


def _benchmark_file(path: Path, inst: Instance) -> None:
    """Write `inst` (square) in the benchmark `pieces_NxN.txt` layout."""
    lines = [str(inst.width), str(inst.n_colours), "0", "0"]
    lines += [" ".join(str(int(c)) for c in p) for p in inst.pieces]
    path.write_text("\n".join(lines) + "\n")


def _snakemake(workdir: Path, config: Path, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", str(workdir),
         "--snakefile", str(REPO / "Snakefile"), "--configfile", str(config), *extra],
        capture_output=True, text=True, env=env, timeout=300,
    )


def test_pipeline_end_to_end(tmp_path):
    t0 = time.perf_counter()
    ext = _instance(4, 4, seed=9, n_frame=2, n_inner=3)
    _benchmark_file(tmp_path / "pieces_4x4.txt", ext)
    cfg = {
        "results": "res", "threads": 1, "hamming": [1],
        "demo_instances": {"tiny": {"size": "4x4", "frame_colours": 2, "inner_colours": 3,
                                    "seed": 7}},
        "instances": {"ext": "pieces_4x4.txt"},
    }
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    proc = _snakemake(tmp_path, tmp_path / "cfg.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = tmp_path / "res"
    for name in ("tiny", "ext"):
        assert (res / "instances" / f"{name}.e2s").exists()
        assert "result:  ok" in (res / "instances" / f"{name}.validate.txt").read_text()
        assert (res / "logs" / "enumerate" / f"{name}_h1.log").exists()
    imported = read_instance(res / "instances" / "ext.e2s")
    assert imported.name == "ext" and imported.content_hash == ext.content_hash
    summary = json.loads((res / "summary.json").read_text())
    manifest = store.read_manifest(res / "store")
    assert summary["checksum"] == manifest["checksum"]
    assert {e["name"] for e in summary["entries"]} == {"tiny", "ext"}
    for e in summary["entries"]:
        parts = [p for p in manifest["partitions"]
                 if p["instance"] == e["instance"] and p["hamming"] == 1]
        assert e["corolles"] == sum(p["corolles"] for p in parts if p["rotation"] == 0)
        assert e["rows"] == sum(p["rows"] for p in parts)
        assert e["bytes"] == sum(f["bytes"] for p in parts for f in p["files"])
        assert e["partitions"] == len(parts) and e["complete"] and e["size"] == "4x4"
        receipt = json.loads((res / "receipts" / f"{e['name']}_h1.json").read_text())
        assert receipt["entries"] == [e]
    assert (res / "summary.md").read_text() == format_markdown(summary)
    again = _snakemake(tmp_path, tmp_path / "cfg.yaml", "--dry-run")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    assert time.perf_counter() - t0 < 60

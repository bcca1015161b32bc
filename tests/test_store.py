"""The flat store: partitions equal direct enumeration, manifest, atomic and resumable writes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import naive
import numpy as np
import pyarrow.parquet as pq
import pytest
from helpers import Killed, kill_at_replace, write_doc

from e2store import store
from e2store.corolles.enumerate import count_corolles, enumerate_corolles
from e2store.errors import StoreError
from e2store.instance.formats import read_instance
from e2store.instance.generate import generate_instance
from e2store.instance.model import Instance
from e2store.zones.zonemap import zone_map


def _instance(w=5, h=4, seed=21, n_frame=3, n_inner=5) -> Instance:
    return Instance(f"rnd{seed}", w, h, naive.random_board_pieces(w, h, n_frame, n_inner, seed))


def _rows(cells: np.ndarray, front: np.ndarray) -> set[tuple[int, ...]]:
    return set(map(tuple, np.hstack([cells.astype(int), front.astype(int)]).tolist()))


def _visible_parquet(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.parquet") if store.STAGING not in p.parts]


def test_every_member_cell_reads_back_its_own_corolles(tmp_path):
    inst = _instance()
    for h in (1, 2):
        store.enumerate_store(tmp_path, inst, h, None, chunk_rows=500)
        zm = zone_map(inst.width, inst.height, h)
        for z in zm.zones:
            for m in z.members:
                cells, front = store.read_partition(tmp_path, inst.id, h, z.id, m.rotation)
                want_c, want_f = enumerate_corolles(inst, m.x, m.y, h)
                assert len(cells) == len(want_c)
                assert _rows(cells, front) == _rows(want_c, want_f), (h, z.id, m)


def test_manifest_counts_and_checksums(tmp_path):
    inst = _instance()
    store.enumerate_store(tmp_path, inst, 2, None, chunk_rows=300, rows_per_file=1000)
    man = store.read_manifest(tmp_path)
    zm = zone_map(inst.width, inst.height, 2)
    assert {(p["zone"], p["rotation"]) for p in man["partitions"]} == {
        (z.id, r) for z in zm.zones for r in z.rotations}
    for p in man["partitions"]:
        d = tmp_path / p["path"]
        assert p["instance"] == inst.id and p["form"] == "flat"
        assert p["rows"] == p["corolles"] == sum(f["rows"] for f in p["files"])
        assert p["corolles"] == count_corolles(inst, p["x"], p["y"], 2).corolles
        # nodes are those of the search at the canonical cell (the search order depends on
        # the cell's orientation, the corolles do not)
        assert p["nodes"] == count_corolles(inst, *p["canonical"], 2).nodes
        assert all(f["rows"] <= 1000 for f in p["files"])
        for f in p["files"]:
            data = (d / f["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == f["sha256"]
            assert len(data) == f["bytes"]
            pf = pq.ParquetFile(d / f["file"])
            assert pf.metadata.num_rows == f["rows"]
            kv = {k.decode(): v.decode() for k, v in pf.schema_arrow.metadata.items()}
            assert kv["e2store.form"] == "flat" and kv["e2store.zone"] == str(p["zone"])
            assert pf.metadata.row_group(0).column(0).compression == "ZSTD"
    # the store carries its instance, readable back to the same content hash
    back = read_instance(store.instance_path(tmp_path, inst.id))
    assert back.id == inst.id


def test_same_input_gives_byte_identical_files(tmp_path):
    inst = _instance(seed=5)
    a, b = tmp_path / "a", tmp_path / "b"
    store.enumerate_store(a, inst, 2, None, chunk_rows=700)
    store.enumerate_store(b, inst, 2, None, chunk_rows=700, threads=2)
    ma, mb = store.read_manifest(a), store.read_manifest(b)
    assert ma["checksum"] == mb["checksum"]
    assert [f["sha256"] for p in ma["partitions"] for f in p["files"]] == [
        f["sha256"] for p in mb["partitions"] for f in p["files"]]


def test_interrupted_run_leaves_nothing_partial_and_a_rerun_completes(tmp_path):
    inst = _instance(seed=8)
    ref = tmp_path / "ref"
    store.enumerate_store(ref, inst, 2, None, chunk_rows=200)
    root = tmp_path / "store"
    calls = {"n": 0}

    def boom(n: int) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store.enumerate_store(root, inst, 2, None, chunk_rows=200, progress=boom)
    # whatever is visible is complete: listed in the manifest with matching checksums
    man = store.read_manifest(root)
    listed = {root / p["path"] / f["file"] for p in man["partitions"] for f in p["files"]}
    assert set(_visible_parquet(root)) == listed
    assert len(man["partitions"]) < len(store.read_manifest(ref)["partitions"])
    store.enumerate_store(root, inst, 2, None, chunk_rows=200)
    assert store.read_manifest(root)["checksum"] == store.read_manifest(ref)["checksum"]
    assert not (root / store.STAGING).exists() or not any((root / store.STAGING).iterdir())


def test_sigkill_mid_write_then_rerun(tmp_path):
    """A real SIGKILL while a partition is being written: no partial file is visible."""
    inst = generate_instance(6, 6, 4, 6, seed=4, name="kill")  # zone (2,1): ~4M corolles
    path = tmp_path / "kill.e2s"
    from e2store.instance.e2sfile import write_e2store

    write_e2store(inst, path)
    root = tmp_path / "store"
    cmd = [sys.executable, "-m", "e2store", "enumerate", str(path), "--hamming", "2",
           "--at", "2,1", "--store", str(root)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    try:
        while time.time() < deadline and proc.poll() is None:
            staged = list((root / store.STAGING).rglob("*.parquet")) if root.exists() else []
            if staged:
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    if proc.returncode == 0:
        pytest.skip("the run finished before it could be killed")
    complete = {p.parent for p in root.rglob(store.PARTITION_META)
                if store.STAGING not in p.parts}
    for f in _visible_parquet(root):
        assert f.parent in complete, f"partial file visible: {f}"
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "partitions written" in done.stdout
    parts = store.read_manifest(root)["partitions"]
    assert [p["rotation"] for p in parts] == [0, 1, 2, 3]
    want = count_corolles(inst, 2, 1, 2, threads=2).corolles
    assert all(p["corolles"] == want for p in parts)
    for p in parts:
        for f in p["files"]:
            data = (root / p["path"] / f["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == f["sha256"]


def test_design_worked_example_in_the_store(tmp_path, shared_instances):
    inst = read_instance(shared_instances / "benchmark" / "pieces_4x4.txt")
    want = {1: {(0, 0): 56, (1, 0): 294, (0, 1): 294, (1, 1): 797},
            2: {(0, 0): 708, (1, 0): 1268, (0, 1): 1301, (1, 1): 320}}
    for h, cells in want.items():
        store.enumerate_store(tmp_path, inst, h, None)
        zm = zone_map(4, 4, h)
        parts = {(p["zone"], p["rotation"]): p for p in store.read_manifest(tmp_path)["partitions"]
                 if p["hamming"] == h}
        for (x, y), n in cells.items():
            z = zm.zone_at(x, y)
            assert parts[(z.id, zm.rotation_at(x, y))]["corolles"] == n


def test_newer_format_and_missing_partition_are_clear_errors(tmp_path):
    inst = _instance()
    with pytest.raises(StoreError, match="no manifest"):
        store.read_manifest(tmp_path)
    store.enumerate_store(tmp_path, inst, 1, [0])
    with pytest.raises(StoreError, match="run `e2store enumerate --form flat`"):
        store.read_partition(tmp_path, inst.id, 1, 1, 0)
    m = json.loads((tmp_path / store.MANIFEST).read_text())
    m["format_version"] = store.FORMAT_VERSION + 1
    write_doc(tmp_path / store.MANIFEST, m)  # a newer e2store's, digest and all
    with pytest.raises(StoreError, match="upgrade e2store"):
        store.read_manifest(tmp_path)
    with pytest.raises(StoreError, match="does not exist"):
        store.enumerate_store(tmp_path, inst, 1, [99])


def test_concurrent_processes_share_one_store(tmp_path):
    inst = _instance(6, 5, 31, 4, 8)
    path = tmp_path / "c.e2s"
    from e2store.instance.e2sfile import write_e2store

    write_e2store(inst, path)
    root = tmp_path / "store"
    procs = [subprocess.Popen([sys.executable, "-m", "e2store", "enumerate", str(path),
                               "--hamming", str(h), "--store", str(root)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for h in (1, 2, 1)]
    for p in procs:
        assert p.wait() == 0, p.stderr.read()
    got = {(p["hamming"], p["zone"], p["rotation"])
           for p in store.read_manifest(root)["partitions"]}
    want = {(h, z.id, r) for h in (1, 2) for z in zone_map(6, 5, h).zones for r in z.rotations}
    assert got == want


def test_clean_staging_removes_only_abandoned_runs(tmp_path):
    import fcntl

    staging = tmp_path / store.STAGING
    (staging / "dead").mkdir(parents=True)
    (staging / "dead.lock").touch()
    (staging / "live").mkdir()
    live_lock = staging / "live.lock"
    live_lock.touch()
    (staging / "orphan").mkdir()
    old = time.time() - 3600
    for p in staging.iterdir():
        os.utime(p, (old, old))
    fd = os.open(live_lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert store.clean_staging(tmp_path) == 2
        assert sorted(p.name for p in staging.iterdir()) == ["live", "live.lock"]
    finally:
        os.close(fd)
    assert store.clean_staging(tmp_path) == 1
    assert not any(staging.iterdir())


def test_a_killed_runs_staging_goes_at_once(tmp_path):
    """A run killed while staging leaves its directory; a run started right after removes it
    (no grace period: a run's lock is visible only once held)."""
    import signal
    import subprocess
    import sys

    code = ("import sys, time\nfrom pathlib import Path\nfrom e2store.store.write import "
            "staging_run\nwith staging_run(Path(sys.argv[1])) as d:\n"
            "    (d / 'part.parquet').write_bytes(b'x')\n    print(d, flush=True)\n"
            "    time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE,
                         text=True)
    staged = Path(p.stdout.readline().strip())
    assert (staged / "part.parquet").exists()
    assert store.clean_staging(tmp_path) == 0  # alive: left alone
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert store.clean_staging(tmp_path) == 1
    assert not any((tmp_path / store.STAGING).iterdir())
    # a lock being made by a run that died before holding it: removed once stale
    new = tmp_path / store.STAGING / "abc.lock-new"
    new.touch()
    assert store.clean_staging(tmp_path) == 0 and new.exists()
    old = time.time() - 3600
    os.utime(new, (old, old))
    store.clean_staging(tmp_path)
    assert not new.exists()


def test_force_publish_killed_at_any_step_leaves_a_consistent_store(tmp_path, monkeypatch):
    """A forced rewrite replaces a partition's files one rename at a time; killed after any
    of them, the manifest lists only files that exist with their recorded hashes (`verify`
    passes), and a rerun completes the store."""
    import shutil

    from e2store.store.layout import partition_dir
    from e2store.store.verify import verify_store

    inst = _instance(4, 4, seed=5)
    pristine, other = tmp_path / "pristine", tmp_path / "other"
    store.enumerate_store(pristine, inst, 1, [0], rows_per_file=40)
    store.enumerate_store(other, inst, 1, [0], rows_per_file=25)  # same rows, other files
    want = store.read_partition(pristine, inst.id, 1, 0, 0)
    k = 0
    while True:
        k += 1
        root = tmp_path / f"s{k}"
        shutil.copytree(pristine, root)
        staged = tmp_path / f"staged{k}"
        shutil.copytree(partition_dir(other, inst.id, 1, 0, 0, "flat"), staged)
        kill_at_replace(monkeypatch, k)
        try:
            store.publish_partition(staged, root, (inst.id, 1, 0, 0), tmp_path / f"trash{k}",
                                    ["flat"], listed=True)
            done = True
        except Killed:
            done = False
        monkeypatch.undo()
        report = verify_store(root)
        assert report.ok, (k, [str(d) for d in report.damaged])
        store.enumerate_store(root, inst, 1, [0], rows_per_file=40)  # the rerun
        assert verify_store(root).ok
        got = store.read_partition(root, inst.id, 1, 0, 0)
        assert _rows(*got) == _rows(*want), k
        if done:
            break
    assert k > 5  # records out, manifest, old files out, new files in, records in, manifest

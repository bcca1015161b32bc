"""Fault injection on boards files and instance copies (issue 45): what is caught, what is
lost.

* **Bit flips** in boards files (Parquet and Arrow IPC) of a real `solve --best` run: each
  flip read back by `read_boards` (the path of `score`, `render`, `serve` and a resume):
  caught (an error naming the file), harmless (the very rows written: a byte no reader
  uses) or **wrong** (other rows, no error: must be 0).
* **Bit flips** in a store's instance copy: caught by `verify`, and what a read gives
  (an error, or the same instance: must never be another one).
* **Writer pairs**: two `solve --best` processes started together on one `-o` file, other
  seeds: rows each reported against rows kept (lost must be 0; the second one may be
  refused with one line).
* **kill -9** of a run at random moments, then a rerun: restarts repeated or missing, and
  temp files left behind (all must be 0).

    python benchmarks/boards_trust.py [--flips 500] [--pairs 5] [--kills 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _host import cpu_model

from e2store.boards.table import read_boards, write_boards
from e2store.errors import DamagedDataError, DamagedStoreError, SolverError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.generate import generate_instance

ENV = {**os.environ, "E2STORE_PROGRESS_INTERVAL": "60"}
BEST = ["--breaks", "20,24,28", "--restart-nodes", "300", "--no-fill"]


def e2store(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "e2store", *args], env=ENV,
                          capture_output=True, text=True, **kw)


def flips_of_boards(inst, d: Path, suffix: str, n: int, rng) -> dict:
    src = d / f"run{suffix}"
    b = read_boards(d / "run.parquet", inst)
    write_boards(src, inst, b)
    good = src.read_bytes()
    out = {"file": suffix, "bytes": len(good), "rows": len(b), "tried": n, "caught": 0,
           "harmless": 0, "wrong": 0}
    path = d / f"flip{suffix}"
    for pos in rng.choice(len(good), size=min(n, len(good)), replace=False):
        bad = bytearray(good)
        bad[pos] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(bad))
        try:
            got = read_boards(path, inst)
        except (SolverError, DamagedDataError):
            out["caught"] += 1
            continue
        same = np.array_equal(got.cells, b.cells) and all(
            np.array_equal(got.stats[k], b.stats[k]) for k in b.stats)
        out["harmless" if same else "wrong"] += 1
    return out


def flips_of_instance(piece_file: Path, inst, d: Path, n: int, rng) -> dict:
    import e2store as api

    store = d / "store"
    r = e2store("enumerate", str(piece_file), "--hamming", "1", "--store", str(store),
                "--form", "flat")
    assert r.returncode == 0, r.stderr
    copy = store / "instances" / f"{inst.id}.e2s"
    good = copy.read_bytes()
    out = {"tried": n, "verify_caught": 0, "read_refused": 0, "read_same": 0, "read_wrong": 0}
    for pos in rng.choice(len(good), size=min(n, len(good)), replace=False):
        bad = bytearray(good)
        bad[pos] ^= 1 << int(rng.integers(8))
        copy.write_bytes(bytes(bad))
        from e2store.store.verify import verify_store

        if not verify_store(store).ok:
            out["verify_caught"] += 1
        try:
            with api.connect(store) as st:
                got = st.instance(inst.id)
        except (DamagedStoreError, OSError):
            out["read_refused"] += 1
            continue
        same = got.id == inst.id and np.array_equal(got.pieces, inst.pieces)
        out["read_same" if same else "read_wrong"] += 1
    copy.write_bytes(good)
    return out


def writer_pairs(piece_file: Path, d: Path, pairs: int) -> dict:
    out = {"pairs": pairs, "runs": 0, "refused": 0, "rows_reported": 0, "rows_kept": 0,
           "duplicates": 0}
    for i in range(pairs):
        path = d / f"pair{i}.parquet"
        procs = [subprocess.Popen([sys.executable, "-m", "e2store", "best", str(piece_file),
                                   *BEST, "--minutes", "0.1", "--seed", str(s), "-o",
                                   str(path), "--json"], env=ENV, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for s in (7, 8)]
        for p in procs:
            so, se = p.communicate(timeout=600)
            out["runs"] += 1
            if p.returncode == 0:
                out["rows_reported"] += json.loads(so)["restarts"]
            elif "being written by another run" in se:
                out["refused"] += 1
            else:
                raise RuntimeError(se)
        b = read_boards(path)
        keys = list(zip(b.stats["seed"].tolist(), b.stats["restart"].tolist(), strict=True))
        out["rows_kept"] += len(keys)
        out["duplicates"] += len(keys) - len(set(keys))
    out["lost"] = out["rows_reported"] - out["rows_kept"]
    return out


def kills(piece_file: Path, d: Path, n: int, rng) -> dict:
    path = d / "killed.parquet"
    args = [sys.executable, "-m", "e2store", "best", str(piece_file), *BEST, "--seed", "5",
            "-o", str(path)]
    out = {"kills": n, "temp_files_after_rerun": 0}
    for _ in range(n):
        p = subprocess.Popen([*args, "--minutes", "5"], env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        start = time.time()
        while not path.exists() and time.time() - start < 300:
            time.sleep(0.02)
        time.sleep(float(rng.uniform(0, 1.5)))
        p.kill()
        p.wait()
    r = subprocess.run([*args, "--restarts", "2"], env=ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    b = read_boards(path)
    ks = b.stats["restart"].tolist()
    out["restarts"] = len(set(ks))
    out["repeated"] = len(ks) - len(set(ks))
    out["missing"] = max(ks) + 1 - len(set(ks))
    out["temp_files_after_rerun"] = sum(1 for p in d.iterdir()
                                        if p.name.startswith(".killed.parquet."))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flips", type=int, default=500)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--kills", type=int, default=10)
    args = ap.parse_args()
    print(f"host: {cpu_model()}")
    rng = np.random.default_rng(2026)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        inst = generate_instance(6, 6, 3, 5, seed=4)
        piece_file = d / "g6.e2s"
        write_e2store(inst, piece_file)
        r = e2store("best", str(piece_file), *BEST[:-1], "--restarts", "40", "-o",
                    str(d / "run.parquet"))
        assert r.returncode == 0, r.stderr
        for suffix in (".parquet", ".arrow"):
            f = flips_of_boards(inst, d, suffix, args.flips, rng)
            print(f"boards file {f['file']:8} ({f['bytes']:,} bytes, {f['rows']} rows): "
                  f"{f['tried']} flips, {f['caught']} caught, {f['harmless']} harmless, "
                  f"{f['wrong']} wrong")
        f = flips_of_instance(piece_file, inst, d, min(args.flips, 200), rng)
        print(f"instance copy: {f['tried']} flips, verify caught {f['verify_caught']}; reads: "
              f"{f['read_refused']} refused, {f['read_same']} the same instance, "
              f"{f['read_wrong']} wrong")
        w = writer_pairs(piece_file, d, args.pairs)
        print(f"writer pairs: {w['pairs']} pairs, {w['refused']} second runs refused, "
              f"{w['rows_reported']} restarts reported, {w['rows_kept']} kept, {w['lost']} "
              f"lost, {w['duplicates']} duplicates")
        k = kills(piece_file, d, args.kills, rng)
        print(f"kill -9: {k['kills']} kills then a rerun: {k['restarts']} restarts kept, "
              f"{k['repeated']} repeated, {k['missing']} missing, "
              f"{k['temp_files_after_rerun']} temp files left")
        shutil.rmtree(d / "store", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

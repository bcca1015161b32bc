"""`e2store verify`: a clean store verifies; every damaged byte, missing file, tampered
record or manifest and damaged closure table is reported with its path, exit code 1."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import random_instance, vouch_for, write_doc

from e2store.cli import main
from e2store.errors import StoreError
from e2store.query.closures import open_closure
from e2store.store.build import enumerate_store
from e2store.store.records import doc_digest
from e2store.store.verify import verify_store


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("verify") / "store"
    inst = random_instance(5, 5, 3)
    for h in (1, 2):
        enumerate_store(root, inst, h, None, forms=("flat", "prefix", "cartesian"))
    open_closure(root, inst)
    return root


@pytest.fixture
def store(clean_store, tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(clean_store, root)
    return root


def data_files(root: Path) -> list[Path]:
    return sorted(root.glob("*/hamming=*/instance=*/zone=*/rotation=*/*.parquet"))


def test_clean_store_verifies(store):
    r = verify_store(store)
    instances = len(list((store / "instances").glob("*.e2s")))
    assert r.ok and r.partitions > 0 and instances == 1
    assert r.files == len(data_files(store)) + 1 + instances  # + the closure table
    assert r.closures == 1
    out = CliRunner().invoke(main, ["verify", "--store", str(store)])
    assert out.exit_code == 0 and out.stdout.endswith(": ok\n")
    sel = verify_store(store, hammings=[1])
    assert sel.ok and 0 < sel.files < r.files


def test_every_sampled_flip_is_caught(store):
    """One flipped byte at a time, in sampled files of every form: verify names the file."""
    rng = random.Random(0)
    files = data_files(store) + sorted((store / "closures").glob("*.bloom"))
    forms = {p.name.split("-")[0] for p in files}
    assert {"part", "prefix", "cartesian"} <= forms  # flat files are part-*.parquet
    for path in rng.sample(files, min(30, len(files))):
        raw = path.read_bytes()
        pos = rng.randrange(len(raw))
        path.write_bytes(raw[:pos] + bytes([raw[pos] ^ (1 << rng.randrange(8))]) + raw[pos + 1:])
        r = verify_store(store)
        path.write_bytes(raw)
        assert [d.path for d in r.damaged] == [str(path.relative_to(store))], (path, pos)
        assert "sha256" in r.damaged[0].problem


def test_damage_reported_on_the_command_line(store):
    victim = data_files(store)[0]
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    victim.write_bytes(bytes(raw))
    gone = data_files(store)[-1]
    gone.unlink()
    out = CliRunner().invoke(main, ["verify", "--store", str(store)])
    assert out.exit_code == 1
    lines = out.stdout.splitlines()
    assert any(ln.startswith(f"DAMAGED {victim.relative_to(store)}: sha256 ") for ln in lines)
    assert any(ln.startswith(f"DAMAGED {gone.relative_to(store)}: missing") for ln in lines)
    assert any(ln.startswith("repair: e2store enumerate ") and "--force" in ln for ln in lines)
    d = json.loads(CliRunner().invoke(main, ["verify", "--store", str(store),
                                             "--json"]).stdout)
    assert not d["ok"] and len(d["damaged"]) == 2


def test_records_and_manifest_tampering(store):
    """A record or manifest edited without its digest is damaged; one crafted with a fresh
    digest is checked against the files and the other JSON files (rows, entries, checksum);
    a garbled manifest is reported (exit 1), not an error, and `--repair` rebuilds it."""
    rec = sorted(store.glob("flat/hamming=*/instance=*/zone=*/rotation=*/_partition.json"))[0]
    clean_rec = rec.read_bytes()
    m = json.loads(rec.read_text())
    m["files"][0]["rows"] += 1
    rec.write_text(json.dumps(m, indent=1, sort_keys=True) + "\n")  # the old digest kept
    problems = [d.line() for d in verify_store(store).damaged]
    assert problems == [f"{rec.relative_to(store)}: damaged partition record (its content "
                        f"hashes to {doc_digest(m)[:16]}..., its digest says "
                        f"{m['digest'][:16]}...)"]
    write_doc(rec, m)  # crafted: a fresh digest
    manifest = store / "manifest.json"
    clean_manifest = manifest.read_bytes()
    man = json.loads(manifest.read_text())
    man["checksum"] = "0" * 64
    write_doc(manifest, man)
    problems = [d.line() for d in verify_store(store).damaged]
    assert any("rows, the record says" in p for p in problems)
    assert any(p.startswith("manifest.json: entry of") for p in problems)
    assert any(p.startswith("manifest.json: checksum") for p in problems)
    rec.write_text("{not json")
    assert any("damaged partition record (not JSON" in d.problem
               for d in verify_store(store).damaged)
    rec.write_bytes(clean_rec)
    manifest.write_text("{")
    assert [d.path for d in verify_store(store).damaged] == ["manifest.json"]
    out = CliRunner().invoke(main, ["verify", "--store", str(store)])
    assert out.exit_code == 1 and "Traceback" not in out.output
    out = CliRunner().invoke(main, ["verify", "--store", str(store), "--repair"])
    assert out.exit_code == 0, out.output
    assert manifest.read_bytes() == clean_manifest


def test_crafted_cartesian_counts_are_an_error_not_a_crash(store):
    """A cartesian file whose `corolles` column lies (rewritten with valid Parquet and the
    right metadata): reading it is a StoreError naming the partition, and verify flags it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from e2store.store.read import read_partition

    victim = next(p for p in data_files(store) if p.name.startswith("cartesian")
                  and "hamming=2" in str(p) and pq.read_metadata(p).num_rows > 0)
    t = pq.read_table(victim)
    i = t.schema.get_field_index("corolles")
    t = t.set_column(i, t.schema.field(i), pa.array(np.zeros(len(t), np.int64),
                                                     type=t.schema.field(i).type))
    pq.write_table(t, victim)
    # a crafted store: the record vouches for the crafted file (hash and size), so only
    # the kernel's bound check stands between it and the heap
    vouch_for(victim, "cartesian")
    parts = victim.parent.relative_to(store).parts
    h, inst_id, zone, rot = (int(parts[1].split("=")[1]), parts[2].split("=")[1],
                             int(parts[3].split("=")[1]), int(parts[4].split("=")[1]))
    with pytest.raises(StoreError, match="damaged cartesian file.*e2store verify"):
        read_partition(store, inst_id, h, zone, rot, "cartesian")
    assert [d.path for d in verify_store(store).damaged] == ["manifest.json"]  # stale entry


@pytest.mark.parametrize("form", ["flat", "prefix", "cartesian"])
def test_readers_never_return_wrong_rows(store, form):
    """1,000 sampled single-bit flips in the files of a form: `read_partition` raises
    StoreError for every one (each file is checked against its record's SHA-256 before it is
    decoded: a flip in a page header, which the page CRCs do not cover, once read as other
    values), never returns other rows, never raises another exception."""
    from e2store.errors import StoreError as Err
    from e2store.store.read import read_partition

    prefix = {"flat": "part", "prefix": "prefix", "cartesian": "cartesian"}[form]
    files = [p for p in data_files(store) if p.name.startswith(prefix)]
    rng = random.Random(form)
    caught = 0
    cleans: dict[Path, tuple] = {}  # each partition's clean rows, read once
    for _ in range(1000):
        path = rng.choice(files)
        kv = dict(x.split("=") for x in path.parent.relative_to(store).parts[1:])
        parts = [kv["instance"], int(kv["hamming"]), int(kv["zone"]), int(kv["rotation"])]
        if path.parent not in cleans:
            cleans[path.parent] = read_partition(store, *parts, form)
        clean = cleans[path.parent]
        raw = path.read_bytes()
        pos = rng.randrange(len(raw))
        path.write_bytes(raw[:pos] + bytes([raw[pos] ^ (1 << rng.randrange(8))]) + raw[pos + 1:])
        try:
            got = read_partition(store, *parts, form)
        except Err:
            caught += 1
        else:
            assert all(np.array_equal(a, b) for a, b in zip(got, clean, strict=True)), (path, pos)
        finally:
            path.write_bytes(raw)
    assert caught == 1000


def test_repair_rewrites_exactly_what_is_damaged(store, clean_store):
    """`verify --repair`: flipped, deleted and mis-recorded files are rewritten, a damaged
    closure table removed, a garbled manifest rebuilt; the store then verifies and has the
    clean store's checksum; untouched partitions keep their files."""
    files = data_files(store)
    by_form = {p.name.split("-")[0]: p for p in files}
    flip = by_form["part"]
    raw = bytearray(flip.read_bytes())
    raw[len(raw) // 3] ^= 0x10
    flip.write_bytes(bytes(raw))
    by_form["cartesian"].unlink()
    bloom = next((store / "closures").glob("*.bloom"))
    raw = bytearray(bloom.read_bytes()[:4096])
    raw[7] ^= 1
    with open(bloom, "r+b") as fh:
        fh.write(bytes(raw))
    untouched = {p: p.stat().st_mtime_ns for p in files
                 if p.parent not in (flip.parent, by_form["cartesian"].parent)}
    (store / "manifest.json").write_text("{")
    out = CliRunner().invoke(main, ["verify", "--store", str(store), "--repair"])
    assert out.exit_code == 0, out.output
    assert out.stdout.endswith(": ok\n")
    assert "repaired: rewrote instance=" in out.stderr and "removed closures/" in out.stderr
    assert not list((store / "closures").glob("*.bloom"))
    want = json.loads((clean_store / "manifest.json").read_text())["checksum"]
    assert json.loads((store / "manifest.json").read_text())["checksum"] == want
    assert all(p.stat().st_mtime_ns == t for p, t in untouched.items())


def test_sql_views_check_their_files_first(store):
    """A query naming the `corolles` (or `stems`) view hashes that view's files once first:
    a damaged file is an error naming it, not rows decoded from a damaged page header; a
    query over the small views still runs."""
    from e2store.query.handle import connect

    victim = next(p for p in data_files(store) if p.name.startswith("part"))
    raw = bytearray(victim.read_bytes())
    raw[len(raw) // 2] ^= 0x04
    victim.write_bytes(bytes(raw))
    with connect(store) as db:
        assert db.sql("SELECT count(*) AS n FROM manifest")["n"][0].as_py() > 0
        assert db.sql("SELECT count(*) AS n FROM stems")["n"][0].as_py() > 0
        with pytest.raises(StoreError, match=f"{victim.name}: damaged data file.*verify"):
            db.sql("SELECT count(*) FROM corolles")
    out = CliRunner().invoke(main, ["sql", "--store", str(store), "SELECT count(*) FROM "
                                    "corolles"])
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    assert victim.name in out.stderr and len(out.stderr.strip().splitlines()) == 1

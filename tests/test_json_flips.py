"""Every JSON file of a store is covered by its digest (issue 39): single-bit flips in the
manifest, the partition records and the closure header, sampled over every byte class,
are all caught by `verify`, no reader answers differently from the clean store without an
error, none raises anything but a StoreError, and `verify --repair` gives back a store
byte for byte equal to the clean one (records included), after flips in data files too."""

from __future__ import annotations

import random
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import random_instance

from e2store.cli import main
from e2store.errors import E2StoreError, StoreError
from e2store.query.closures import open_closure, read_closure
from e2store.query.handle import connect
from e2store.store.build import enumerate_store
from e2store.store.read import read_manifest, read_partition, read_record
from e2store.store.verify import repair_store, verify_store

INST = random_instance(4, 4, 7)


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("flips") / "store"
    forms = ("flat", "prefix", "cartesian", "distinct")
    enumerate_store(root, INST, 1, None, forms=forms)
    enumerate_store(root, INST, 2, [1], forms=forms)
    open_closure(root, INST)
    return root


@pytest.fixture
def store(clean, tmp_path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(clean, root)
    return root


def byte_class(b: int) -> str:
    c = chr(b)
    if c in '{}[],:"':
        return "structure"
    if c.isdigit():
        return "digit"
    if c.isalpha() or c in "_-=.":
        return "letter"
    return "blank"


def sampled_flips(root: Path, n: int, seed: int) -> list[tuple[Path, int, int]]:
    """(file, position, bit): `n` flips over the store's JSON files, the same number from
    each byte class of each kind of file (manifest, records, closure header)."""
    rng = random.Random(seed)
    kinds = {"manifest": [root / "manifest.json"],
             "record": sorted(root.glob("*/hamming=*/instance=*/zone=*/rotation=*/_part*.json")),
             "closure": sorted((root / "closures").glob("*.json"))}
    strata = defaultdict(list)  # (kind, class) -> [(file, pos)]
    for kind, files in kinds.items():
        for f in files:
            for pos, b in enumerate(f.read_bytes()):
                strata[(kind, byte_class(b))].append((f, pos))
    keys = sorted(strata)
    out = []
    for i in range(n):
        f, pos = rng.choice(strata[keys[i % len(keys)]])
        out.append((f, pos, rng.randrange(8)))
    return out


def flip(path: Path, pos: int, bit: int) -> bytes:
    raw = path.read_bytes()
    path.write_bytes(raw[:pos] + bytes([raw[pos] ^ (1 << bit)]) + raw[pos + 1:])
    return raw


def answers(root: Path, rec_path: Path | None) -> dict:
    """What the readers say of the store: the manifest's partitions and data checksum,
    SQL over the views, the cardinality (from the records' placements) and the rows of
    the partition of `rec_path` (or of one partition), the closure table's header.  Each
    value is the answer or the e2store error it raised (anything else fails)."""
    if rec_path is None:
        rec_path = next(root.glob("flat/hamming=2/instance=*/zone=1/rotation=0/_partition.json"))
    d = rec_path.parent.relative_to(root).parts
    kv = dict(p.split("=") for p in d[1:])
    key = (kv["instance"], int(kv["hamming"]), int(kv["zone"]), int(kv["rotation"]))
    form = d[0]

    def ask(f):
        try:
            return f()
        except E2StoreError as e:  # StoreError, ClosureError (a ValueError)
            assert "\n" not in str(e), str(e)
            return ("error", type(e).__name__)

    out = {
        "manifest": ask(lambda: (read_manifest(root)["checksum"],
                                 len(read_manifest(root)["partitions"]))),
        "record": ask(lambda: read_record(root, *key, form)["rows"]),
        "closure": ask(lambda: read_closure(root, INST, load=False).fingerprint),
    }
    if form != "distinct":
        out["rows"] = ask(lambda: [a.tobytes() for a in read_partition(root, *key, form)])

    def with_handle():
        with connect(root) as st:
            return (st.sql("SELECT zone, rotation, form, corolles FROM manifest "
                           "ORDER BY ALL").to_pylist(),
                    st.cardinality(*key).to_pylist())
    out["sql"] = ask(with_handle)
    return out


def same_or_error(got: dict, clean: dict) -> list[str]:
    """The readers whose answer differs from the clean one without being an error."""
    return [k for k, v in got.items()
            if v != clean[k] and not (isinstance(v, tuple) and v and v[0] == "error")]


@pytest.mark.parametrize("n, ask_every", [
    (200, 4), pytest.param(3000, 1, marks=pytest.mark.slow)])
def test_every_sampled_json_flip_is_caught_and_no_reader_is_wrong(store, n, ask_every):
    """`n` flips, each verified; every `ask_every`-th one also put to the readers."""
    flips = sampled_flips(store, n, seed=39 + n)
    classes = {(p.name, byte_class(p.read_bytes()[pos])) for p, pos, _ in flips}
    assert {c for _, c in classes} == {"structure", "digit", "letter", "blank"}
    clean_answers: dict[Path, dict] = {}
    missed, wrong = [], []
    for i, (path, pos, bit) in enumerate(flips):
        rec = path if path.name.startswith("_part") else None
        if rec not in clean_answers:
            clean_answers[rec] = answers(store, rec)
        raw = flip(path, pos, bit)
        try:
            report = verify_store(store)
            if str(path.relative_to(store)) not in [d.path for d in report.damaged]:
                missed.append((path.name, pos, bit))
            bad = i % ask_every == 0 and same_or_error(answers(store, rec), clean_answers[rec])
            if bad:
                wrong.append((path.name, pos, bit, bad))
        finally:
            path.write_bytes(raw)
    assert not missed, missed
    assert not wrong, wrong


def test_commands_say_one_line_never_a_traceback(store):
    """Flips in the manifest and a record: each command exits 0 with the clean output or
    non-zero with one line naming the damaged file, never with a Python exception."""
    rec = next(store.glob("cartesian/hamming=2/instance=*/zone=1/rotation=0/_part*.json"))
    inst = rec.parent.parent.parent.name.split("=")[1]
    commands = [["verify", "--store", str(store)],
                ["summary", "--store", str(store)],
                ["sql", "--store", str(store), "SELECT sum(corolles) FROM zone_stats"],
                ["expand", "--store", str(store), "--instance", inst, "--hamming", "2",
                 "--zone", "1", "--form", "cartesian"]]
    runner = CliRunner()
    clean = [runner.invoke(main, c) for c in commands]
    assert all(r.exit_code == 0 for r in clean), [r.output for r in clean]
    for path, pos, bit in sampled_flips(store, 60, seed=1):
        if path.name.startswith("_part") and path != rec:
            continue
        raw = flip(path, pos, bit)
        try:
            for c, ok in zip(commands, clean, strict=True):
                r = runner.invoke(main, c)
                assert r.exception is None or isinstance(r.exception, SystemExit), (
                    c[0], path.name, pos, r.exception)
                if r.exit_code == 0:
                    assert c[0] != "verify" and r.stdout == ok.stdout, (c[0], path.name, pos)
                else:
                    assert path.name in r.stderr or c[0] == "verify", (c[0], r.stderr)
                    if c[0] != "verify":
                        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        finally:
            path.write_bytes(raw)


def tree(root: Path) -> dict[str, bytes]:
    """Every file of a store but its lock and closure tables, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".lock" and p.parts[len(root.parts)] != "closures"}


def test_repair_gives_back_the_clean_store_byte_for_byte(store, clean):
    """After one flip at a time (records, manifest, closure header, and data files of every
    form), `verify --repair` leaves a store whose every file equals the clean store's: a
    record is rebuilt from its manifest entry and data files, a partition re-enumerated
    keeps its record (nodes and timings as first written)."""
    want = tree(clean)
    rng = random.Random(5)
    data = sorted(store.glob("*/hamming=*/instance=*/zone=*/rotation=*/*.parquet"))
    by_form = defaultdict(list)
    for p in data:
        by_form[p.parts[len(store.parts)]].append(p)
    cases = [(p, pos, bit) for p, pos, bit in sampled_flips(store, 24, seed=2)]
    cases += [(p, rng.randrange(p.stat().st_size), rng.randrange(8))
              for form in sorted(by_form) for p in rng.sample(by_form[form], 2)]
    for path, pos, bit in cases:
        flip(path, pos, bit)
        report = verify_store(store)
        assert not report.ok
        repair_store(store, report)
        assert verify_store(store).ok, (path, pos, bit)
        got = tree(store)
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        assert not diff, (path.relative_to(store), pos, bit, diff)
        if "closures" in path.parts:
            assert read_closure(store, INST) is None  # removed: the next solve rebuilds it
            open_closure(store, INST)


def test_missing_manifest_says_how_to_finish(store):
    """Partitions published but no manifest (a killed run): readers name `verify --repair`,
    which writes it back equal to the clean one."""
    clean = (store / "manifest.json").read_bytes()
    (store / "manifest.json").unlink()
    with pytest.raises(StoreError, match="verify --store .* --repair"):
        read_manifest(store)
    out = CliRunner().invoke(main, ["sql", "--store", str(store), "SELECT 1"])
    assert out.exit_code == 2 and "--repair" in out.stderr
    out = CliRunner().invoke(main, ["verify", "--store", str(store), "--repair"])
    assert out.exit_code == 0, out.output
    assert (store / "manifest.json").read_bytes() == clean

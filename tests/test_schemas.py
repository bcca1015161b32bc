"""The JSON Schemas of schemas/ against files the command line really writes.

A tiny generated 4x4 instance; the store (enumerate, and the stages shard, gather, rotate,
encode), the zone plan (`plan --json`), count plans (`count-plan`) and count records
(`counts`) are written once per module, then every file is validated against its schema
(docs/store-format.md, docs/counting.md), and a broken copy of each must be rejected.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from e2store.cli import main
from e2store.store.layout import record_paths

jsonschema = pytest.importorskip("jsonschema")
referencing = pytest.importorskip("referencing")

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
NAMES = ("manifest", "partition", "zone-plan", "count-plan", "count-record")


def _run(*args: str) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def validators() -> dict:
    """A Draft 2020-12 validator per schema; cross-file `$ref`s resolve by file name."""
    docs = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.schema.json")}
    assert {f"{n}.schema.json" for n in NAMES} <= set(docs)
    registry = referencing.Registry().with_resources(
        (name, referencing.Resource.from_contents(doc)) for name, doc in docs.items())
    out = {}
    for n in NAMES:
        doc = docs[f"{n}.schema.json"]
        jsonschema.Draft202012Validator.check_schema(doc)
        out[n] = jsonschema.Draft202012Validator(doc, registry=registry)
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, list[Path]]:
    """Every kind of JSON file, written by the command line on a tiny instance."""
    d = tmp_path_factory.mktemp("schemas")
    inst = d / "tiny.e2s"
    _run("generate-instance", "--size", "4", "--frame-colours", "2", "--inner-colours", "3",
         "--seed", "2", "-o", inst)
    st = d / "store"
    _run("enumerate", inst, "--hamming", "1", "--store", st,
         "--form", "flat", "--form", "prefix", "--form", "cartesian")
    # hamming 2 stage by stage: zone 0 cut into shards, gathered, rotated and encoded
    plan = d / "plan.json"
    _run("stage", "plan", inst, "--hamming", "2", "--shard-corolles", "1", "--max-shards", "2",
         "-o", plan)
    zone0 = json.loads(plan.read_text())["zones"][0]
    assert zone0["shards"] == 2
    common = ("--store", st, "--hamming", "2", "--zone", "0")
    for k in range(2):
        _run("stage", "shard", inst, *common, "--shard", f"{k}/2")
    _run("stage", "gather", inst, *common, "--shards", "2")
    _run("stage", "rotate", inst, *common, "--form", "flat")
    _run("stage", "encode", inst, *common, "--form", "prefix")
    _run("stage", "encode", inst, *common, "--form", "cartesian")
    _run("enumerate", inst, "--hamming", "1", "--distinct", "--store", st)
    # count plans (one zone left out at hamming 2) and count records (every method)
    _run("stage", "count-plan", inst, "--hamming", "1", "-o", d / "count-plan-h1.json")
    _run("stage", "count-plan", inst, "--hamming", "2", "--max-stems", "1", "-o",
         d / "count-plan-h2.json")
    rec = d / "records"
    _run("tabulate", inst, "--hamming", "1", "--hamming", "2", "--records", rec,
         "--shard-stems", "1", "--max-shards", "3")
    _run("tabulate", inst, "--hamming", "3", "--at", "0,0", "--records", rec)
    _run("tabulate", inst, "--hamming", "1", "--distinct", "--records", rec, "--shard-stems",
         "1", "--max-shards", "2")
    files = {
        "manifest": [st / "manifest.json"],
        "partition": record_paths(st),
        "zone-plan": [plan],
        "count-plan": sorted(d.glob("count-plan-h*.json")),
        "count-record": sorted(rec.glob("*/h*/*-*/*shard-*-of-*.json")),
    }
    records = [json.loads(p.read_text()) for p in files["partition"]]
    assert {r["form"] for r in records} == {"flat", "prefix", "cartesian", "distinct"}
    assert any("shards" in r for r in records) and any("source" in r for r in records)
    methods = {json.loads(p.read_text())["method"] for p in files["count-record"]}
    assert methods == {"factorised-mobius-2", "arms-1", "distinct-walk-1"}
    return files


@pytest.mark.parametrize("name", NAMES)
def test_written_files_match_their_schema(validators, written, name):
    assert written[name], f"no {name} file was written"
    for path in written[name]:
        errors = [f"{list(e.absolute_path)}: {e.message}"
                  for e in validators[name].iter_errors(json.loads(path.read_text()))]
        assert not errors, f"{path}: {errors[:5]}"


def _doc(written, name: str, pick=lambda d: True) -> dict:
    docs = [json.loads(p.read_text()) for p in written[name]]
    return copy.deepcopy(next(d for d in docs if pick(d)))


def _broken(written) -> list[tuple[str, str, dict]]:
    """(schema, what is wrong, document) for documents each schema must reject."""
    out = []

    def case(name, what, change, pick=lambda d: True):
        d = _doc(written, name, pick)
        change(d)
        out.append((name, what, d))

    case("manifest", "bad checksum", lambda d: d.update(checksum="abc"))
    case("manifest", "placements in an entry",
         lambda d: d["partitions"][0].update(placements=["00"]))
    case("manifest", "entry without path", lambda d: d["partitions"][0].pop("path"))
    case("manifest", "newer format", lambda d: d.update(format_version=5))
    case("manifest", "no digest", lambda d: d.pop("digest"))
    case("partition", "no digest", lambda d: d.pop("digest"))
    case("partition", "no files", lambda d: d.pop("files"))
    case("partition", "rotation 0 derived", lambda d: d.update(derived=True),
         pick=lambda d: d["rotation"] == 0)
    case("partition", "flat file name in a prefix record",
         lambda d: d["files"][0].update(file="part-00000.parquet"),
         pick=lambda d: d["form"] == "prefix")
    case("partition", "unknown key", lambda d: d.update(colour="blue"))
    case("partition", "bad sha256", lambda d: d["files"][0].update(sha256="0" * 63))
    case("zone-plan", "zone with 0 shards", lambda d: d["zones"][0].update(shards=0))
    case("zone-plan", "rotation 4", lambda d: d["zones"][0].update(rotations=[0, 4]))
    case("count-plan", "hamming-2 zone without stems",
         lambda d: d["zones"][0].pop("stems"), pick=lambda d: d["hamming"] == 2)
    case("count-plan", "hamming-1 zone left out",
         lambda d: d["zones"][0].update(shards=0), pick=lambda d: d["hamming"] == 1)
    case("count-record", "arms at hamming 2", lambda d: d.update(method="arms-1"),
         pick=lambda d: d["hamming"] == 2)
    case("count-record", "negative count", lambda d: d.update(corolles=-1))
    case("count-record", "no prefixes", lambda d: d.pop("prefixes"))
    case("count-record", "string corolles", lambda d: d.update(corolles="12"))
    return out


def test_broken_documents_are_rejected(validators, written):
    cases = _broken(written)
    assert {name for name, _, _ in cases} == set(NAMES)
    accepted = [f"{name}: {what}" for name, what, doc in cases
                if validators[name].is_valid(doc)]
    assert not accepted

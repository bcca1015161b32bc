"""Re-hash a store against what it recorded (`e2store verify`).

Every complete partition has a record (`_partition[.form].json`) listing its Parquet files
with their size, SHA-256 and rows, and the manifest aggregates the records with a
checksum over every file's hash.  `verify_store` re-reads everything: each file's bytes
against its record (missing, size, SHA-256), its Parquet footer (row count, the e2store
metadata naming its partition), each record's row total, the manifest's entries against
the records and its checksum, and the stored closure tables against their headers.  A
damaged file is reported with its path, what was expected and what was found, and the
command that rewrites its partition; `repair_store` runs those rewrites (`verify --repair`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from e2store.errors import StoreError
from e2store.store.layout import FORMS, MANIFEST, instance_path, record_paths
from e2store.store.read import check_file_metadata, read_manifest
from e2store.store.write import sha256_file


@dataclass
class Damage:
    """One damaged file: where, what is wrong, and the partition it belongs to (if any)."""

    path: str
    problem: str
    partition: dict | None = None

    def line(self) -> str:
        return f"{self.path}: {self.problem}"

    def repair(self, root: Path) -> str | None:
        """The command that rewrites this file's partition, or None."""
        p = self.partition
        if p is None:
            return None
        return (f"e2store enumerate {instance_path(root, p['instance'])} --store "
                f"{root} --hamming {p['hamming']} --at {p['x']},{p['y']} --form {p['form']} "
                f"--force")


@dataclass
class VerifyReport:
    """What `verify_store` read and what it found damaged."""

    root: str
    files: int = 0
    bytes: int = 0
    partitions: int = 0
    closures: int = 0
    damaged: list[Damage] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.damaged

    def to_dict(self) -> dict:
        root = Path(self.root)
        return {"store": self.root, "ok": self.ok, "partitions": self.partitions,
                "files": self.files, "bytes": self.bytes, "closure_tables": self.closures,
                "damaged": [{"path": d.path, "problem": d.problem, "repair": d.repair(root)}
                            for d in self.damaged]}


def _selected(m: dict, instances: Iterable[str] | None, hammings: Iterable[int] | None) -> bool:
    return ((instances is None or m.get("instance") in set(instances))
            and (hammings is None or m.get("hamming") in set(hammings)))


def _check_record(root: Path, meta: Path, rec: dict, report: VerifyReport) -> None:
    """Check one partition record's files (bytes, hash, footer) and row total."""
    d = meta.parent
    part = {k: rec.get(k) for k in ("instance", "hamming", "zone", "rotation", "form", "x", "y")}
    expected = {"form": str(rec.get("form")), "instance": str(rec.get("instance")),
                "hamming": str(rec.get("hamming")), "zone": str(rec.get("zone")),
                "rotation": str(rec.get("rotation"))}
    rows = 0  # footer rows of readable files, recorded rows of damaged ones
    for f in rec.get("files", []):
        path = d / f["file"]
        rel = str(path.relative_to(root))
        report.files += 1
        rows += int(f.get("rows") or 0)
        if not path.exists():
            report.damaged.append(Damage(rel, f"missing (expected {f.get('bytes')} bytes, "
                                              f"sha256 {f.get('sha256')})", part))
            continue
        size = path.stat().st_size
        report.bytes += size
        if size != f.get("bytes"):
            report.damaged.append(Damage(rel, f"{size} bytes, expected {f.get('bytes')}", part))
            continue
        found = sha256_file(path)
        if found != f.get("sha256"):
            report.damaged.append(Damage(rel, f"sha256 {found}, expected {f.get('sha256')}",
                                         part))
            continue
        try:
            pf = pq.ParquetFile(path)
            kv = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
            check_file_metadata(path, kv, expected)
            n = pf.metadata.num_rows
        except (OSError, ValueError, StoreError) as e:
            report.damaged.append(Damage(rel, f"unreadable Parquet footer ({e})", part))
            continue
        if n != f.get("rows"):
            report.damaged.append(Damage(rel, f"{n} rows, the record says {f.get('rows')}",
                                         part))
    if rec.get("form") == "flat" and rows != rec.get("rows"):
        report.damaged.append(Damage(str(meta.relative_to(root)),
                                     f"its files list {rows} rows in all, the record says "
                                     f"{rec.get('rows')}", part))


def _check_manifest(root: Path, manifest: dict, records: dict[tuple[str, str], dict],
                    instances, hammings, report: VerifyReport) -> None:
    """The manifest's entries against the records on disk, and its checksum."""
    digest = hashlib.sha256()
    for m in manifest.get("partitions", []):
        for f in m.get("files", []):
            digest.update(f"{m['path']}/{f['file']} {f['sha256']}\n".encode())
        if not _selected(m, instances, hammings):
            continue
        rec = records.get((m.get("path"), m.get("form")))
        if rec is None:
            report.damaged.append(Damage(MANIFEST, f"lists partition {m.get('path')} "
                                                   f"({m.get('form')}) that has no record"))
        elif rec.get("files") != m.get("files") or rec.get("rows") != m.get("rows"):
            report.damaged.append(Damage(MANIFEST, f"entry of {m.get('path')} "
                                                   f"({m.get('form')}) differs from its record"))
    if digest.hexdigest() != manifest.get("checksum"):
        report.damaged.append(Damage(MANIFEST, f"checksum {manifest.get('checksum')} does not "
                                               f"match its entries ({digest.hexdigest()})"))


def _check_closures(root: Path, report: VerifyReport) -> None:
    """Stored closure tables (`e2store.query.closures`) against their headers."""
    for head_path in sorted((root / "closures").glob("*.json")):
        report.closures += 1
        rel = str(head_path.relative_to(root))
        try:
            head = json.loads(head_path.read_text())
            data = head_path.with_suffix(".bloom")
            want = head["sha256"]
        except (OSError, ValueError, KeyError) as e:
            report.damaged.append(Damage(rel, f"unreadable closure header ({e})"))
            continue
        if not data.exists():
            report.damaged.append(Damage(str(data.relative_to(root)), "missing"))
            continue
        report.files += 1
        report.bytes += data.stat().st_size
        found = sha256_file(data)
        if found != want:
            report.damaged.append(Damage(str(data.relative_to(root)),
                                         f"sha256 {found}, expected {want} (delete it and its "
                                         f".json header; the next `solve --store` rebuilds "
                                         f"it)"))


def verify_store(root: str | Path, instances: Iterable[str] | None = None,
                 hammings: Iterable[int] | None = None,
                 progress: Callable[[str], None] | None = None) -> VerifyReport:
    """Re-hash every file of store `root` (or of the chosen instances and hammings) against
    its records and the manifest (module docstring).  StoreError when `root` has no
    readable manifest."""
    root = Path(root)
    try:
        manifest = read_manifest(root)
    except ValueError as e:  # a damaged manifest.json
        raise StoreError(f"{root / MANIFEST}: unreadable manifest ({e}); rebuild it with "
                         f"`e2store enumerate ... --store {root}`") from None
    instances = None if instances is None else list(instances)
    hammings = None if hammings is None else list(hammings)
    report = VerifyReport(str(root))
    records: dict[tuple[str, str], dict] = {}
    for meta in record_paths(root):
        try:
            rec = json.loads(meta.read_text())
        except (OSError, ValueError) as e:
            report.damaged.append(Damage(str(meta.relative_to(root)),
                                         f"unreadable partition record ({e})"))
            continue
        if rec.get("form") not in FORMS or not _selected(rec, instances, hammings):
            continue
        records[(str(meta.parent.relative_to(root)), rec["form"])] = rec
        report.partitions += 1
        _check_record(root, meta, rec, report)
        if progress:
            progress(f"verified {report.partitions} partitions, {report.files} files")
    _check_manifest(root, manifest, records, instances, hammings, report)
    if instances is None and hammings is None:
        _check_closures(root, report)
    return report


def repair_store(root: str | Path, report: VerifyReport, progress=None) -> list[str]:
    """Rewrite what `report` found damaged in store `root`: every damaged partition's zone
    re-enumerated in that form (forced, from the store's own copy of the instance: the
    command `Damage.repair` names), damaged closure tables removed (the next `solve
    --store` rebuilds them), then the manifest rewritten from the records.  One line per
    action."""
    from e2store.instance.formats import read_instance
    from e2store.store.build import enumerate_store
    from e2store.store.write import write_manifest

    root = Path(root)
    done = []
    todo = sorted({(p["instance"], p["hamming"], p["zone"], p["form"])
                   for d in report.damaged if (p := d.partition) is not None})
    for inst_id, hamming, zone, form in todo:
        path = instance_path(root, inst_id)
        inst = read_instance(path, format="e2store")
        if inst.id != inst_id:
            raise StoreError(f"{path}: holds instance {inst.id}, the store's records say "
                             f"{inst_id}; enumerate that instance again into a new store")
        enumerate_store(root, inst, hamming, [zone], force=True, forms=[form],
                        progress=progress)
        done.append(f"rewrote instance={inst_id} hamming={hamming} zone={zone} ({form})")
    closures = sorted({Path(d.path).with_suffix("") for d in report.damaged
                       if d.partition is None and Path(d.path).parts[:1] == ("closures",)})
    for stem in closures:
        for suffix in (".bloom", ".json"):
            (root / stem).with_suffix(suffix).unlink(missing_ok=True)
        done.append(f"removed {stem}.bloom and .json (the next `solve --store` rebuilds it)")
    write_manifest(root)
    done.append(f"rewrote {MANIFEST} from the records")
    return done

"""Re-hash a store against what it recorded (`e2store verify`).

Every JSON file of the store (records, manifest, closure headers) carries its own digest
(`e2store.store.records`) and is checked against it first, and against the bytes e2store
writes for its content.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from e2store.errors import DamagedStoreError, StoreError
from e2store.files import sha256_file
from e2store.store.layout import (
    MANIFEST,
    check_layout,
    instance_path,
    meta_name,
    partition_dir,
    record_paths,
)
from e2store.store.read import (
    check_file_metadata,
    missing_manifest,
    partition_placements,
    read_manifest,
    read_store_instance,
)
from e2store.store.records import (
    DIGEST,
    check_manifest,
    check_record,
    doc_digest,
    dump_doc,
    load_doc,
    load_record,
    parse_doc,
)


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
        if p.get("lost"):  # the copy's pieces are gone: only the original file has them
            return (f"rm {root}/{self.path} && e2store enumerate PIECE_FILE --store {root} "
                    f"--hamming 1  (PIECE_FILE: the instance's original piece file)")
        if "instance_copy" in p:
            return f"e2store verify --store {root} --repair"
        if p.get("record") or p.get("x") is None:
            return f"e2store verify --store {root} --repair"
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
                    damaged_records: set[tuple[str, str]], instances, hammings,
                    report: VerifyReport) -> None:
    """The manifest's entries against the records on disk (each entry is its record less
    the placements, plus its path), and the data checksum.  A record the manifest does not
    list is not damage: a run stopped before it listed it, and readers do not see it yet."""
    digest = hashlib.sha256()
    for m in manifest["partitions"]:
        for f in m["files"]:
            digest.update(f"{m['path']}/{f['file']} {f['sha256']}\n".encode())
        key = (m["path"], m["form"])
        if not _selected(m, instances, hammings) or key in damaged_records:
            continue
        rec = records.get(key)
        if rec is None:
            report.damaged.append(Damage(MANIFEST, f"lists partition {m['path']} "
                                                   f"({m['form']}) that has no record"))
        elif {k: v for k, v in rec.items() if k != "placements"} != {
                k: v for k, v in m.items() if k != "path"}:
            report.damaged.append(Damage(MANIFEST, f"entry of {m['path']} ({m['form']}) "
                                                   f"differs from its record"))
    if digest.hexdigest() != manifest["checksum"]:
        report.damaged.append(Damage(MANIFEST, f"checksum {manifest['checksum']} does not "
                                               f"match its entries ({digest.hexdigest()})"))


def _check_closures(root: Path, report: VerifyReport) -> None:
    """Stored closure tables (`e2store.query.closures`) against their headers."""
    for head_path in sorted((root / "closures").glob("*.json")):
        report.closures += 1
        rel = str(head_path.relative_to(root))
        try:
            head = load_doc(head_path, root, "closure header")
            data = head_path.with_suffix(".bloom")
            want = head["sha256"]
        except (OSError, KeyError) as e:
            report.damaged.append(Damage(rel, _problem(e)))
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


def _problem(e: Exception) -> str:
    """What is wrong with a damaged JSON file, without its path (Damage adds it)."""
    if isinstance(e, DamagedStoreError):
        return f"damaged {e.what} ({e.problem})"
    return f"unreadable ({e})"


def _path_partition(root: Path, meta: Path) -> dict:
    """The partition a record's path names (form, hamming, instance, zone, rotation)."""
    d = meta.parent.relative_to(root).parts
    kv = dict(p.split("=", 1) for p in d[1:])
    return {"form": d[0], "instance": kv["instance"], "hamming": int(kv["hamming"]),
            "zone": int(kv["zone"]), "rotation": int(kv["rotation"])}


def _read_checked(path: Path, root: Path, check, what: str) -> tuple[dict | None, str | None]:
    """(document, None) or (None, problem): digest, shape, and the exact bytes e2store
    writes for that content (so a change that leaves the content alone is found too)."""
    try:
        raw = path.read_bytes()
        doc = check(parse_doc(raw, path.relative_to(root), root, what), path, root)
    except (OSError, ValueError) as e:
        return None, _problem(e)
    if raw != dump_doc(doc).encode():
        return None, "damaged (its bytes are not those e2store writes for its content)"
    return doc, None


def verify_store(root: str | Path, instances: Iterable[str] | None = None,
                 hammings: Iterable[int] | None = None,
                 progress: Callable[[str], None] | None = None) -> VerifyReport:
    """Re-hash every file of store `root` (or of the chosen instances and hammings) against
    its records and the manifest, and every JSON file against its digest (module
    docstring).  StoreError when `root` has no manifest and no record (not a store), or
    is of an older version (run `e2store migrate`)."""
    root = Path(root)
    check_layout(root)
    instances = None if instances is None else list(instances)
    hammings = None if hammings is None else list(hammings)
    report = VerifyReport(str(root))
    manifest = None
    if not (root / MANIFEST).exists():
        if not record_paths(root):
            raise StoreError(missing_manifest(root))
        report.damaged.append(Damage(MANIFEST, "missing (a run stopped before it wrote it)"))
    else:
        try:
            read_manifest(root)  # the version; StoreVersionError names `migrate`
        except DamagedStoreError:
            pass  # reported below, with the other JSON files
        manifest, problem = _read_checked(root / MANIFEST, root, check_manifest, "manifest")
        if problem:
            report.damaged.append(Damage(MANIFEST, problem))
    entries = {(m["path"], m["form"]): m for m in (manifest or {}).get("partitions", [])}
    records: dict[tuple[str, str], dict] = {}
    damaged_records: set[tuple[str, str]] = set()
    for meta in record_paths(root):
        part = _path_partition(root, meta)
        if not _selected(part, instances, hammings):
            continue
        key = (str(meta.parent.relative_to(root)), part["form"])
        report.partitions += 1
        rec, problem = _read_checked(meta, root, check_record, "partition record")
        if rec is not None and (named := {k: rec[k] for k in part}) != part:
            rec, problem = None, (f"damaged partition record (it describes {named}, not its "
                                  f"directory)")
        if rec is None:
            assert problem is not None  # _read_checked gives a document or a problem
            entry = entries.get(key, {})
            part |= {"x": entry.get("x"), "y": entry.get("y"), "record": True}
            report.damaged.append(Damage(str(meta.relative_to(root)), problem, part))
            damaged_records.add(key)
            continue
        records[key] = rec
        _check_record(root, meta, rec, report)
        if progress:
            progress(f"verified {report.partitions} partitions, {report.files} files")
    if manifest is not None:
        _check_manifest(root, manifest, records, damaged_records, instances, hammings, report)
    if instances is None and hammings is None:
        _check_closures(root, report)
    _check_instances(root, manifest, {m["instance"] for m in entries.values()}
                     | {r["instance"] for r in records.values()}, instances, report)
    return report


def _check_instances(root: Path, manifest: dict | None, used: set[str],
                     instances: Iterable[str] | None, report: VerifyReport) -> None:
    """Each instance copy (`instances/<id>.e2s`, and one for every instance the partitions
    name): it must read back to its id (the id hashes the pieces) and, when the manifest
    records one, have the SHA-256 it records."""
    known = (manifest or {}).get("instances", {})
    on_disk = {p.stem for p in (root / "instances").glob("*.e2s")}
    for iid in sorted(on_disk | used | set(known)):
        if instances is not None and iid not in instances:
            continue
        path = instance_path(root, iid)
        rel = str(path.relative_to(root))
        try:
            read_store_instance(root, iid)
        except DamagedStoreError as e:
            report.damaged.append(Damage(rel, e.problem, {"instance_copy": iid, "lost": True}))
            continue
        except OSError as e:
            report.damaged.append(Damage(rel, _problem(e)))
            continue
        report.files += 1
        report.bytes += path.stat().st_size
        found = sha256_file(path)
        if iid in known and found != known[iid]:
            report.damaged.append(Damage(rel, f"sha256 {found}, the manifest says "
                                              f"{known[iid]}", {"instance_copy": iid}))


def repair_store(root: str | Path, report: VerifyReport, progress=None) -> list[str]:
    """Rewrite what `report` found damaged in store `root`, one line per action:

    * a damaged record is rebuilt from its manifest entry and its data files (the
      placements recomputed), when that gives back the record the entry's digest names;
    * otherwise, and for damaged data files, the partition is re-enumerated in that form
      (forced, from the store's own copy of the instance: the command `Damage.repair`
      names); a record still intact is then kept as it was (its timings and nodes) when
      the new files are the ones it lists;
    * damaged closure tables are removed (the next `solve --store` rebuilds them);
    * the manifest is rewritten from the records last."""
    from e2store.files import atomic_write_text
    from e2store.instance.formats import read_instance
    from e2store.store.build import enumerate_store
    from e2store.store.write import store_lock, write_manifest

    root = Path(root)
    done = []
    try:
        entries = {(m["path"], m["form"]): m for m in read_manifest(root)["partitions"]}
    except StoreError:
        entries = {}
    instances: dict[str, object] = {}

    def instance(inst_id: str):
        if inst_id not in instances:
            path = instance_path(root, inst_id)
            inst = read_instance(path, format="e2store")
            if inst.id != inst_id:
                raise StoreError(f"{path}: holds instance {inst.id}, the store's records say "
                                 f"{inst_id}; enumerate that instance again into a new store")
            instances[inst_id] = inst
        return instances[inst_id]

    todo: dict[tuple, set[int]] = {}
    for d in report.damaged:
        p = d.partition
        if p is None:
            continue
        if "instance_copy" in p:
            done.append(_repair_instance(root, p["instance_copy"]))
            continue
        if p.get("record"):
            with store_lock(root):
                rebuilt = _rebuild_record(root, root / d.path, entries, instance(p["instance"]))
            if rebuilt:
                done.append(f"rebuilt {d.path} from the manifest and its data files")
                continue
        todo.setdefault((p["instance"], p["hamming"], p["zone"], p["form"]),
                        set()).add(p["rotation"])
    for (inst_id, hamming, zone, form), rotations in sorted(todo.items()):
        kept = {}
        for r in rotations:
            meta = partition_dir(root, inst_id, hamming, zone, r, form) / meta_name(form)
            try:
                kept[meta] = (meta.read_text(), load_record(meta, root))
            except (OSError, ValueError):
                pass  # damaged or missing: the new record stands
        enumerate_store(root, instance(inst_id), hamming, [zone], force=True, forms=[form],
                        rotations=sorted(rotations), progress=progress)
        for meta, (text, old) in kept.items():
            new = load_record(meta, root)
            same = all(new.get(k) == old.get(k) for k in ("files", "rows", "corolles",
                                                              "placements"))
            if same:
                atomic_write_text(meta, text)  # its nodes and timings, as first written
        done.append(f"rewrote instance={inst_id} hamming={hamming} zone={zone} ({form}, "
                    f"rotation {', '.join(map(str, sorted(rotations)))})")
    closures = sorted({Path(d.path).with_suffix("") for d in report.damaged
                       if d.partition is None and Path(d.path).parts[:1] == ("closures",)})
    for stem in closures:
        for suffix in (".bloom", ".json"):
            (root / stem).with_suffix(suffix).unlink(missing_ok=True)
        done.append(f"removed {stem}.bloom and .json (the next `solve --store` rebuilds it)")
    write_manifest(root)
    done.append(f"rewrote {MANIFEST} from the records")
    return done


def _repair_instance(root: Path, iid: str) -> str:
    """Write instance copy `iid` again from what it holds, when its pieces still give back
    its id and the rewrite has the digest the manifest records; else say what to do."""
    from e2store.instance.e2sfile import write_e2store

    path = instance_path(root, iid)
    rel = path.relative_to(root)
    try:
        inst = read_store_instance(root, iid)
    except (OSError, ValueError):
        return (f"could not repair {rel}: its pieces are lost; remove it and run `e2store "
                f"enumerate PIECE_FILE --store {root} --hamming 1` with the original piece "
                f"file (it writes the copy again)")
    write_e2store(inst, path)  # the canonical bytes of what it holds
    want = _known_instance_digest(root, iid)
    if want is not None and sha256_file(path) != want:
        return (f"rewrote {rel} from its pieces, but not to the bytes the manifest records "
                f"(check it against the original piece file)")
    return f"rewrote {rel} from its pieces"


def _known_instance_digest(root: Path, iid: str) -> str | None:
    try:
        return read_manifest(root).get("instances", {}).get(iid)
    except StoreError:
        return None


def _rebuild_record(root: Path, meta: Path, entries: dict, instance) -> bool:
    """Write the record at `meta` back from its manifest entry and its data files, if
    that gives the record whose digest the entry holds; False otherwise."""
    from e2store.files import atomic_write_text

    key = (str(meta.parent.relative_to(root)), _path_partition(root, meta)["form"])
    entry = entries.get(key)
    if entry is None:
        return False
    rec = {k: v for k, v in entry.items() if k not in ("path", DIGEST)}
    try:
        placements = partition_placements(root, rec, instance)
    except (OSError, ValueError):
        return False  # a data file is damaged too: the partition is rewritten
    for candidate in ({**rec, "placements": placements}, rec):
        if doc_digest(candidate) == entry.get(DIGEST):
            atomic_write_text(meta, dump_doc(candidate))
            return True
    return False

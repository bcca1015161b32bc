"""Moving a store of an older format version to the current one, in place.

Version 1 kept every form of a partition in one directory,
`STORE/instance=<id>/hamming=<h>/zone=<z>/rotation=<r>/`, and the instance at
`STORE/instance=<id>/instance.e2s`; version 2 gives each form its own subtree
(`e2store.store.layout`).  Those files do not change, only their places.  Each form's data
files move before its record, so a migration killed at any point leaves every moved form
complete or not yet visible, and a rerun finishes it.

Version 3 drops the frontier columns `f*` of the flat and distinct forms and writes their
rows PLAIN-encoded: each such partition of an older version is rewritten in a staging run
(its rows, files and row groups kept) and published in place of the old one, as `enumerate
--force` would; the records tell a rerun which partitions are left.  prefix and cartesian
files are the same in both versions.  The manifest is rewritten from the records last (its
checksum changes: it covers the paths and the files' bytes).

Version 4 gives every JSON file its digest (`e2store.store.records`); the data files are
those of version 3, so the records are rewritten (each atomically) and the manifest last,
and the data checksum does not change.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from e2store.errors import StoreError
from e2store.store.layout import (
    FORM_FILE,
    FORMAT_VERSION,
    FORMS,
    MANIFEST,
    distinct_schema,
    flat_schema,
    instance_path,
    layout_metadata,
    meta_name,
    partition_dir,
    record_paths,
    writer_options,
)
from e2store.store.records import dump_doc


def store_version(root: str | Path) -> int:
    """The format version of the store at `root` (0 when it holds nothing yet)."""
    root = Path(root)
    if next(root.glob("instance=*"), None) is not None:
        return 1
    try:
        return int(json.loads((root / MANIFEST).read_text()).get("format_version", 0))
    except FileNotFoundError:
        return 0
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise StoreError(f"{root / MANIFEST}: unreadable manifest ({e}); rebuild it with "
                         f"`e2store verify --store {root} --repair`") from None


def migrate_store(root: str | Path) -> list[str]:
    """Move store `root` to the current format version; one line per step done (none when
    it already is).  StoreError for a newer store, or a file of the old layout that is no
    store file (left where it is, named)."""
    from e2store.store.write import write_manifest

    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"{root}: no such store directory")
    version = store_version(root)
    if version > FORMAT_VERSION:
        raise StoreError(f"{root}: format version {version} is newer than this e2store "
                         f"({FORMAT_VERSION}); upgrade e2store")
    if version == 0:
        return []
    done: list[str] = []
    if version == 1:
        done += _move_v1(root)
    rewritten = _rewrite_frontier_forms(root)
    if rewritten:
        done.append(f"rewrote {rewritten} flat and distinct partitions without their "
                    f"frontier columns (format version 3)")
    digested = _add_digests(root)
    if digested:
        done.append(f"gave {digested} partition records their digest (format version "
                    f"{FORMAT_VERSION})")
    if done or version < FORMAT_VERSION:
        write_manifest(root)
        done.append(f"rewrote {MANIFEST} from the records")
    return done


def _move_v1(root: Path) -> list[str]:
    """Move a version-1 layout's files to their version-2 places (renames only)."""
    from e2store.store.write import store_lock

    with store_lock(root):
        moved = 0
        for inst_dir in sorted(root.glob("instance=*")):
            iid = inst_dir.name.split("=", 1)[1]
            old = inst_dir / "instance.e2s"
            if old.exists():
                new = instance_path(root, iid)
                new.parent.mkdir(parents=True, exist_ok=True)
                os.replace(old, new)
            for part in sorted(inst_dir.glob("hamming=*/zone=*/rotation=*")):
                h, z, r = (int(p.name.split("=", 1)[1]) for p in
                           (part.parent.parent, part.parent, part))
                for form in FORMS:
                    data = sorted(part.glob(f"{FORM_FILE[form]}-*.parquet"))
                    record = part / meta_name(form)
                    if not data and not record.exists():
                        continue
                    final = partition_dir(root, iid, h, z, r, form)
                    final.mkdir(parents=True, exist_ok=True)
                    for d in data:
                        os.replace(d, final / d.name)
                    if record.exists():
                        os.replace(record, final / meta_name(form))
                        moved += 1
            _remove_empty(inst_dir)
        left = sorted(str(p.relative_to(root)) for p in root.glob("instance=*/**/*")
                      if p.is_file())
        if left:
            raise StoreError(f"{root}: migrated {moved} partitions, but these files are not "
                             f"store files and stay in the old layout: {', '.join(left[:5])}"
                             f"{' ...' if len(left) > 5 else ''}; move or remove them, then "
                             f"run `e2store migrate --store {root}` again")
    return [f"moved {moved} partitions and the instance files to the layout of format "
            f"version 2"]


MIGRATING = ".migrating"  # partitions rewritten, not yet in place (a dot: scanners skip it)
READY = "READY"


def _rewrite_frontier_forms(root: Path) -> int:
    """Rewrite every flat and distinct partition whose record is older than version 3
    without its frontier columns; returns how many.

    Each is written whole under STORE/.migrating/<partition>/ and marked READY, then its
    files replace the old ones one by one and its record goes last.  A kill before READY
    leaves the old partition as it was (the work is redone); after it, a rerun finishes the
    moves from what is left there: the old files are never the only copy that is lost."""
    from e2store.store.write import store_lock

    old = []
    for path in record_paths(root):
        rec = json.loads(path.read_text())
        if rec.get("form") in ("flat", "distinct") and rec.get("format_version", 1) < 3:
            old.append((path, rec))
    with store_lock(root):
        for path, rec in old:
            work = root / MIGRATING / "_".join(path.parent.relative_to(root).parts)
            if not (work / READY).exists():
                _rewrite_partition(root, path, rec, work)
            for f in rec["files"]:
                if (work / f["file"]).exists():
                    os.replace(work / f["file"], path.parent / f["file"])
            os.replace(work / path.name, path)
            shutil.rmtree(work)
        shutil.rmtree(root / MIGRATING, ignore_errors=True)
    return len(old)


def _rewrite_partition(root: Path, path: Path, rec: dict, work: Path) -> None:
    """Write partition record `path`'s files without the frontier, and its new record, into
    `work`, then mark it READY."""
    from e2store.files import atomic_write_text, sha256_file
    from e2store.store.read import check_file_hash

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    form, h = rec["form"], rec["hamming"]
    schema = {"flat": flat_schema, "distinct": distinct_schema}[form](
        h, layout_metadata(form, rec["instance"], h, rec["zone"], rec["rotation"]))
    files = []
    for f in rec["files"]:
        src, dst = path.parent / f["file"], work / f["file"]
        check_file_hash(src, root, f["sha256"])  # a damaged file is not carried on
        with pq.ParquetFile(src) as pf, pq.ParquetWriter(dst, schema,
                                                         **writer_options(form)) as w:
            for g in range(pf.num_row_groups):  # the same row groups
                t = pf.read_row_group(g, columns=schema.names)
                w.write_table(pa.Table.from_arrays(t.columns, schema=schema))
        files.append({**f, "bytes": dst.stat().st_size, "sha256": sha256_file(dst)})
    (work / path.name).write_text(dump_doc(
        {**rec, "format_version": FORMAT_VERSION, "files": files}))
    atomic_write_text(work / READY, "")


def _add_digests(root: Path) -> int:
    """Rewrite every partition record older than version 4 with its digest (each
    atomically; e2store.store.records); returns how many.  The manifest, rewritten from the
    records after, says the oldest version until every record is done."""
    from e2store.files import atomic_write_text
    from e2store.store.write import store_lock

    n = 0
    with store_lock(root):
        for path in record_paths(root):
            rec = json.loads(path.read_bytes())
            if isinstance(rec, dict) and rec.get("format_version", 1) < FORMAT_VERSION:
                atomic_write_text(path, dump_doc({**rec, "format_version": FORMAT_VERSION}))
                n += 1
    return n


def _remove_empty(directory: Path) -> None:
    """Remove `directory` and the empty directories under it, bottom up."""
    for d in sorted((p for p in directory.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(d.iterdir()):
            d.rmdir()
    if not any(directory.iterdir()):
        directory.rmdir()

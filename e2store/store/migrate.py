"""Moving a store of an older format version to the current one, in place.

Version 1 kept every form of a partition in one directory,
`STORE/instance=<id>/hamming=<h>/zone=<z>/rotation=<r>/`, and the instance at
`STORE/instance=<id>/instance.e2s`; version 2 gives each form its own subtree
(`e2store.store.layout`).  The files do not change, only their places: no corolle is read
or rewritten, so a migration takes as long as its renames.  Each form's data files move
before its record, so a migration killed at any point leaves every moved form complete or
not yet visible, and a rerun finishes it.  The manifest is rewritten from the records last
(its checksum changes: it covers the paths).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from e2store.errors import StoreError
from e2store.store.layout import (
    FORM_FILE,
    FORMAT_VERSION,
    FORMS,
    MANIFEST,
    instance_path,
    meta_name,
    partition_dir,
)


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
    from e2store.store.write import store_lock, write_manifest

    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"{root}: no such store directory")
    version = store_version(root)
    if version > FORMAT_VERSION:
        raise StoreError(f"{root}: format version {version} is newer than this e2store "
                         f"({FORMAT_VERSION}); upgrade e2store")
    if version == FORMAT_VERSION or version == 0:
        return []
    done: list[str] = []
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
        done.append(f"moved {moved} partitions and the instance files to format version "
                    f"{FORMAT_VERSION}")
    write_manifest(root)
    done.append(f"rewrote {MANIFEST} from the records")
    return done


def _remove_empty(directory: Path) -> None:
    """Remove `directory` and the empty directories under it, bottom up."""
    for d in sorted((p for p in directory.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(d.iterdir()):
            d.rmdir()
    if not any(directory.iterdir()):
        directory.rmdir()

"""The store's JSON files (partition records, the manifest, closure headers), each carrying
its own digest, declared once.

Since format version 4 every JSON document e2store writes into a store ends with a key
`digest`: the SHA-256 of the document's canonical form (`json.dumps` with sorted keys,
no blanks, ASCII) without that key.  Documents are written with sorted keys and an indent
of one, so a document is a function of its content: two stores with the same content have
byte-identical JSON files, and `e2store verify --repair` can rebuild one exactly.

A reader (`load_doc`) checks the bytes decode, parse to an object, and hash to their
digest before it uses one value of them; a damaged document is a `DamagedStoreError` naming
the file and `e2store verify --repair`, never a traceback and never a wrong answer.  A
document without a digest whose `format_version` is older than 4 comes from an older
e2store (`StoreVersionError`: run `e2store migrate`); any other without one is damaged.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from e2store.errors import DamagedStoreError, StoreVersionError

DIGEST = "digest"
DIGEST_SINCE = 4  # the format version that gave every JSON file of a store its digest
MAX_DOC_BYTES = 256 << 20  # a record of a huge zone's placements is a few MB


def canonical(doc: dict) -> bytes:
    """The bytes a document's digest covers: sorted keys, no blanks, ASCII, no digest."""
    body = {k: v for k, v in doc.items() if k != DIGEST}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def doc_digest(doc: dict) -> str:
    """The SHA-256 (hex) of `canonical(doc)`."""
    return hashlib.sha256(canonical(doc)).hexdigest()


def dump_doc(doc: dict, indent: int | None = 1) -> str:
    """The text of `doc` as the store keeps it: its digest set (any old one replaced), keys
    sorted, one value per line; the same content always gives the same bytes."""
    out = {k: v for k, v in doc.items() if k != DIGEST}
    out[DIGEST] = doc_digest(out)
    return json.dumps(out, sort_keys=True, indent=indent, ensure_ascii=True,
                      allow_nan=False) + "\n"


def parse_doc(raw: bytes, path: Path | str, root: Path | str | None = None,
              what: str = "store file") -> dict:
    """The document `raw` holds, checked against its digest (module docstring)."""
    def bad(problem: str) -> DamagedStoreError:
        return DamagedStoreError(path, what, problem, root)

    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise bad(f"byte {e.start} is not UTF-8") from None
    except ValueError as e:  # JSONDecodeError, and RecursionError's cousin for deep nests
        raise bad(f"not JSON: {e}") from None
    except RecursionError:
        raise bad("nested too deep") from None
    if not isinstance(doc, dict):
        raise bad(f"a JSON {type(doc).__name__}, not an object")
    want = doc.get(DIGEST)
    if want is None:
        version = doc.get("format_version", doc.get("format"))
        if isinstance(version, int) and not isinstance(version, bool) and version < DIGEST_SINCE:
            raise StoreVersionError(f"{path}: written by an older e2store (format version "
                                    f"{version}, no digest): run `e2store migrate --store "
                                    f"{root if root is not None else 'STORE'}`")
        raise bad("its digest is missing")
    try:
        found = doc_digest(doc)
    except ValueError as e:  # NaN or infinity cannot be canonical
        raise bad(str(e)) from None
    if found != want:
        raise bad(f"its content hashes to {found[:16]}..., its digest says "
                  f"{str(want)[:16]}...")
    return doc


def load_doc(path: Path | str, root: Path | str | None = None, what: str = "store file",
             ) -> dict:
    """Read and check one JSON document of a store (`parse_doc`); FileNotFoundError when it
    is absent (callers say what to run), DamagedStoreError when unreadable or damaged."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_DOC_BYTES + 1)
    except FileNotFoundError:
        raise
    except (IsADirectoryError, PermissionError, OSError) as e:
        raise DamagedStoreError(path, what, f"unreadable: {e.strerror or e}", root) from None
    if len(raw) > MAX_DOC_BYTES:
        raise DamagedStoreError(path, what, f"over {MAX_DOC_BYTES >> 20} MiB, not one "
                                f"e2store wrote", root)
    return parse_doc(raw, path, root, what)


# shapes: what a reader needs of a record (checked after the digest, so that a document
# e2store did not write, say edited by hand with a fresh digest, is an error too) ----------

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_record(rec: dict, path: Path | str, root: Path | str | None = None) -> dict:
    """`rec` if it has the shape of a partition record, else DamagedStoreError."""
    from e2store.store.layout import FORMS

    def bad(problem: str) -> DamagedStoreError:
        return DamagedStoreError(path, "partition record", problem, root)

    for key in ("hamming", "zone", "rotation", "x", "y", "rows", "corolles", "nodes",
                "format_version"):
        if not _is_int(rec.get(key)) or rec[key] < 0:
            raise bad(f"{key} is {rec.get(key)!r}, not a count")
    if rec.get("form") not in FORMS:
        raise bad(f"form is {rec.get('form')!r}")
    if not isinstance(rec.get("instance"), str):
        raise bad("no instance id")
    files = rec.get("files")
    if not isinstance(files, list):
        raise bad("no list of files")
    for f in files:
        if not (isinstance(f, dict) and isinstance(f.get("file"), str)
                and "/" not in f["file"] and not f["file"].startswith(".")
                and _is_int(f.get("rows")) and _is_int(f.get("bytes"))
                and isinstance(f.get("sha256"), str)):
            raise bad(f"file entry {str(f)[:80]} lacks file, rows, bytes or sha256")
    placements = rec.get("placements")
    if placements is not None and not (isinstance(placements, list)
                                       and all(isinstance(h, str) for h in placements)):
        raise bad("placements are not hex bitmaps")
    return rec


def load_record(path: Path | str, root: Path | str | None = None) -> dict:
    """A partition record, digest and shape checked (`load_doc`, `check_record`)."""
    return check_record(load_doc(path, root, "partition record"), path, root)


def check_manifest(doc: dict, path: Path | str, root: Path | str | None = None) -> dict:
    """`doc` if it has the shape of a manifest (its entries records, each with a path)."""
    def bad(problem: str) -> DamagedStoreError:
        return DamagedStoreError(path, "manifest", problem, root)

    if not _is_int(doc.get("format_version")):
        raise bad("no format version")
    parts = doc.get("partitions")
    if not isinstance(parts, list) or not isinstance(doc.get("checksum"), str):
        raise bad("no partitions or checksum")
    for m in parts:
        if not isinstance(m, dict) or not isinstance(m.get("path"), str):
            raise bad("an entry without a path")
        check_record(m, path, root)
    inst = doc.get("instances", {})  # absent from manifests written before the digests
    if not isinstance(inst, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in inst.items()):
        raise bad("its instance digests are not a map of ids to SHA-256")
    return doc

"""Reading the store back: the manifest, completion records, and partitions of any form
expanded to flat rows (each file checked to belong to the partition asked for)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from e2store.corolles.forms import CartesianRows, frontier_of, prefix_from_table
from e2store.errors import (
    DamagedStoreError,
    MissingInstanceError,
    StoreError,
    StoreVersionError,
)
from e2store.instance.formats import instance_id
from e2store.instance.model import Instance
from e2store.store.layout import (
    FORMAT_VERSION,
    FORMS,
    MANIFEST,
    PARTITION_SCHEMA,
    RAW_FORMS,
    cartesian_schema,
    check_layout,
    distinct_schema,
    flat_schema,
    instance_path,
    meta_name,
    partition_dir,
    prefix_schema,
    record_paths,
)
from e2store.store.records import check_manifest, load_doc, load_record
from e2store.zones.geometry import n_frontier, n_slots

FORM_SCHEMA = {"flat": flat_schema, "prefix": prefix_schema, "cartesian": cartesian_schema,
               "distinct": distinct_schema}


def read_manifest(root: Path) -> dict:
    """The store's manifest, its digest and shape checked (`e2store.store.records`):
    StoreError naming what to run when it is absent, damaged or of another version."""
    root = Path(root)
    path = root / MANIFEST
    check_layout(root)
    try:
        m = load_doc(path, root, "manifest")
    except FileNotFoundError:
        raise StoreError(missing_manifest(root)) from None
    except StoreVersionError:
        raise
    version = m.get("format_version", 0)
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise StoreError(f"{path}: format version {version} is newer than this "
                         f"e2store reads ({FORMAT_VERSION}); upgrade e2store")
    if not isinstance(version, int) or version < FORMAT_VERSION:
        raise StoreVersionError(f"{path}: format version {version}; this "
                                f"e2store reads {FORMAT_VERSION}: run `e2store migrate "
                                f"--store {root}`")
    return check_manifest(m, path, root)


def missing_manifest(root: Path) -> str:
    """Why a store has no manifest, and the command that finishes it."""
    root = Path(root)
    if record_paths(root):  # partitions published, the manifest not yet: a killed run
        return (f"{root / MANIFEST}: no manifest, but the store holds partitions (a run was "
                f"stopped before it wrote one): run `e2store verify --store {root} --repair` "
                f"to write it from the partition records, or rerun the command that was "
                f"stopped")
    return f"{root / MANIFEST}: no manifest (expected a store written by `e2store enumerate`)"


def check_file_metadata(path: Path, kv: dict[str, str], expected: dict[str, str]) -> None:
    """Refuse a Parquet file written by a newer e2store or for another partition or form."""
    raw = kv.get("e2store.format_version", "0") or "0"
    if not (raw.isascii() and raw.isdigit()):  # a damaged footer can say anything
        raise StoreError(f"{path}: damaged file: its format version reads {raw[:20]!r} (run "
                         f"`e2store verify --repair` to rewrite what is damaged)")
    version = int(raw)
    if version > FORMAT_VERSION:
        raise StoreError(f"{path}: format version {version} is newer than this e2store reads "
                         f"({FORMAT_VERSION}); upgrade e2store")
    if version < 1:
        raise StoreError(f"{path}: no e2store metadata (expected a file written by "
                         f"`e2store enumerate`)")
    for key, want in expected.items():
        got = kv.get(f"e2store.{key}")
        if got != want:
            raise StoreError(f"{path}: metadata {key} is {got!r}, expected {want!r} "
                             f"(the file does not belong to this partition; rewrite it with "
                             f"`e2store enumerate --force`)")


def read_record(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                form: str) -> dict:
    """The completion record of a partition; StoreError saying what to run if absent."""
    if form not in FORMS:
        raise StoreError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    d = partition_dir(root, instance_id, hamming, zone, rotation, form)
    record = d / meta_name(form)
    try:
        return load_record(record, root)
    except FileNotFoundError:
        raise StoreError(f"{d}: no complete {form} partition (run `e2store enumerate "
                         f"--form {form}` for it, or the pipeline steps `e2store stage "
                         f"gather`, `stage rotate`, `stage encode`)") from None


def damaged(path: Path, root: Path, e: Exception) -> StoreError:
    """The error of a data file that cannot be read (missing, a page checksum, truncated)."""
    what = "missing data file" if isinstance(e, FileNotFoundError) else f"damaged data file ({e})"
    return StoreError(f"{path}: {what}; run `e2store verify --store {root}`")


def check_file_hash(path: Path, root: Path, sha256: str | None) -> None:
    """The `damaged` error unless the bytes of `path` hash to `sha256` (its record's):
    Parquet's page CRCs cover neither the page headers nor the footer, and a flipped bit
    there can decode as other values."""
    from e2store.files import sha256_file

    try:
        ok = sha256_file(path) == sha256
    except OSError as e:
        raise damaged(path, root, e) from None
    if not ok:
        raise damaged(path, root, ValueError("its SHA-256 is not the one its record holds"))


def checked_paths(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                  form: str, record: dict | None = None,
                  ) -> Iterator[tuple[Path, pq.ParquetFile]]:
    """(path, file) of each Parquet file of a complete partition in order, each checked
    against its record (`record`, default the one on disk) first (`check_file_hash`), then
    to belong to it; their pages' CRC checksums are verified as they are read too."""
    d = partition_dir(root, instance_id, hamming, zone, rotation, form)
    expected = {"form": form, "instance": instance_id, "hamming": str(hamming),
                "zone": str(zone), "rotation": str(rotation)}
    schema = FORM_SCHEMA[form](hamming).remove_metadata()
    if record is None:
        record = read_record(root, instance_id, hamming, zone, rotation, form)
    for f in record["files"]:
        path = d / f["file"]
        check_file_hash(path, root, f.get("sha256"))
        try:
            pf = pq.ParquetFile(path, page_checksum_verification=True)
            kv = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
        except (OSError, ValueError, pa.ArrowException) as e:
            raise damaged(path, root, e) from None
        check_file_metadata(path, kv, expected)
        md = pf.metadata  # the footer has no checksum: its counts against the record's
        groups = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
        if not md.num_rows == sum(groups) == f.get("rows"):
            raise damaged(path, root, ValueError(f"its footer counts {md.num_rows} rows "
                                                 f"({sum(groups)} in its row groups), the "
                                                 f"record {f.get('rows')}"))
        if not pf.schema_arrow.remove_metadata().equals(schema):
            raise damaged(path, root, ValueError(f"columns {pf.schema_arrow.names} are not "
                                                 f"those of a {form} file"))
        yield path, pf


def checked_files(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                  form: str) -> Iterator[pq.ParquetFile]:
    """The Parquet files of a complete partition in order (`checked_paths`)."""
    for _, pf in checked_paths(root, instance_id, hamming, zone, rotation, form):
        yield pf


def _read_tables(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                 form: str, record: dict | None = None) -> Iterator[pa.Table]:
    for path, pf in checked_paths(root, instance_id, hamming, zone, rotation, form, record):
        try:
            t = pf.read()
        except (OSError, ValueError, pa.ArrowException) as e:
            raise damaged(path, root, e) from None
        if len(t) != pf.metadata.num_rows:  # a column chunk's own count was damaged
            raise damaged(path, root, ValueError(f"{len(t)} rows read, its footer counts "
                                                 f"{pf.metadata.num_rows}"))
        yield t


def iter_partition(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                   form: str = "flat", instance: Instance | None = None,
                   ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream a partition of any form as flat row-major (cells (n, S), frontier (n, F))
    chunks, one per file; compact forms are expanded, the frontier computed from the cells
    and the instance (the store keeps it: `instances/<id>.e2s`)."""
    if form == "distinct":
        raise StoreError(f"the distinct form holds one row per distinct corolle, not every "
                         f"corolle: read it with `read_distinct`, or read a form of {RAW_FORMS}")
    if instance is None:
        instance = read_store_instance(root, instance_id)
    for t in _read_tables(root, instance_id, hamming, zone, rotation, form):
        if form == "flat":
            cells = _slot_rows(t, hamming)
        elif form == "prefix":
            cells = prefix_from_table(t, hamming)
        else:
            try:
                cells = CartesianRows.from_table(t, hamming).expand()
            except ValueError as e:
                where = partition_dir(root, instance_id, hamming, zone, rotation, form)
                raise StoreError(f"{where}: damaged cartesian file: {e}; run `e2store verify "
                                 f"--store {root}`") from None
        yield cells, frontier_of(cells, instance, hamming)


def read_distinct(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A distinct partition as row-major (cells (n, S), frontier (n, F), multiplicity (n,)):
    one row per distinct corolle (identical pieces interchangeable, symmetric rotations
    merged: `e2store.instance.classes.DistinctPieces.canonical`), and the raw corolles each
    stands for."""
    cells, mult = [np.zeros((0, n_slots(hamming)), np.int16)], [np.zeros(0, np.int64)]
    for t in _read_tables(root, instance_id, hamming, zone, rotation, "distinct"):
        cells.append(_slot_rows(t, hamming))
        mult.append(t.column("multiplicity").to_numpy().astype(np.int64))
    rows = np.concatenate(cells)
    return (rows, frontier_of(rows, read_store_instance(root, instance_id), hamming),
            np.concatenate(mult))


def partition_placements(root: Path, record: dict, instance: Instance) -> list[str]:
    """The per-slot placement bitmaps (`placements_hex`) of the partition `record`
    describes, computed from its data files (each checked against `record` first): what
    its record keeps as `placements`, for `e2store verify --repair` to rebuild a record."""
    from e2store.corolles.placements import (
        cartesian_placements,
        mark_placements,
        placements_hex,
        placements_seen,
    )

    form, h = record["form"], record["hamming"]
    key = (record["instance"], h, record["zone"], record["rotation"], form)
    seen = placements_seen(h, instance.n_pieces)
    for t in _read_tables(root, *key, record):
        if form == "cartesian":
            try:
                seen |= cartesian_placements(CartesianRows.from_table(t, h), instance.n_pieces)
            except ValueError as e:
                raise StoreError(f"{partition_dir(root, *key)}: damaged cartesian file: "
                                 f"{e}") from None
        else:
            cells = prefix_from_table(t, h) if form == "prefix" else _slot_rows(t, h)
            mark_placements(seen, np.ascontiguousarray(cells.T))
    return placements_hex(seen)


def _slot_rows(t: pa.Table, hamming: int) -> np.ndarray:
    """Row-major cells (n, S) int16 of a flat or distinct table (its `s*` columns)."""
    S = n_slots(hamming)
    out = np.empty((len(t), S), dtype=np.int16)
    for i in range(S):
        out[:, i] = t.column(f"s{i}").to_numpy()
    return out


def read_store_instance(root: str | Path, instance_id: str) -> Instance:
    """The instance the store keeps as `instances/<id>.e2s`, checked: its pieces must give
    back `instance_id` (the id hashes them), so a damaged copy is a DamagedStoreError
    naming the file, never a wrong instance (`verify` also checks its bytes against the
    manifest's digest).  FileNotFoundError when the store has no copy."""
    from e2store.instance.formats import read_instance

    path = instance_path(Path(root), instance_id)
    if not path.is_file():
        raise FileNotFoundError(2, "missing (the store keeps each instance in "
                                   "STORE/instances/)", str(path))
    try:
        inst = read_instance(path, format="e2store")
    except ValueError as e:
        raise DamagedStoreError(path, "instance copy", f"unreadable: {e}",
                                root) from None
    if inst.id != instance_id:
        raise DamagedStoreError(path, "instance copy", f"its pieces give the id {inst.id}, "
                                "not the one it is named after", root)
    return inst



def read_partition(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                   form: str = "flat") -> tuple[np.ndarray, np.ndarray]:
    """Read a partition of any form back as flat row-major (cells, frontier) arrays."""
    S, F = n_slots(hamming), n_frontier(hamming)
    cells, front = [np.zeros((0, S), np.int16)], [np.zeros((0, F), np.int8)]
    for c, f in iter_partition(root, instance_id, hamming, zone, rotation, form):
        cells.append(c)
        front.append(f)
    return np.concatenate(cells), np.concatenate(front)


@dataclass(frozen=True)
class ExpandedPartition:
    """A partition of any form as flat rows: cells (n, S) and frontier (n, F) int16, and
    for the distinct form the multiplicities of its stored rows (None for another form)."""

    cells: np.ndarray
    front: np.ndarray
    multiplicity: np.ndarray | None = None

    @property
    def digest(self) -> str:
        """sha256 of the rows (cells then frontier, int16) sorted: the same for every form
        of one partition, so forms can be compared by it."""
        import hashlib

        rows = np.hstack([self.cells.astype(np.int16), self.front.astype(np.int16)])
        return hashlib.sha256(rows[np.lexsort(rows.T[::-1])].tobytes()).hexdigest()


def expand_partition(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                     form: str = "flat") -> ExpandedPartition:
    """A partition of any form expanded to flat rows; a distinct partition's rows expanded
    to the raw corolles they stand for, checked against its multiplicities (StoreError):
    what `e2store expand` prints and writes."""
    if form != "distinct":
        return ExpandedPartition(*read_partition(root, instance_id, hamming, zone, rotation,
                                                 form))
    from e2store.instance.classes import DistinctPieces

    inst = read_store_instance(root, instance_id)
    rows, _, mult = read_distinct(root, instance_id, hamming, zone, rotation)
    cells = DistinctPieces.of(inst).expand(rows)
    if len(cells) != int(mult.sum()):
        raise StoreError(f"{root}: distinct partition zone={zone} rotation={rotation}: its rows "
                         f"expand to {len(cells):,} corolles, its multiplicities say "
                         f"{int(mult.sum()):,}; run `e2store verify --store {root}`")
    return ExpandedPartition(cells.astype(np.int16), frontier_of(cells, inst, hamming), mult)


def dataset(root: str | Path, form: str = "flat", hamming: int | None = None, *,
            manifest: dict | None = None, verify_pages: bool = True):
    """The complete partitions of `form` (at `hamming`, or every hamming) as a
    `pyarrow.dataset.Dataset`: the form's columns, then `instance`, `hamming`, `zone`,
    `rotation` from the paths.  Over several hammings the columns are those of the highest
    (each lower hamming's are a prefix of them; a column a file lacks reads as null).  Only
    the files the manifest lists are scanned, so a partition still being written is never
    half seen; `verify_pages` checks each page's CRC as it is read."""
    import pyarrow.dataset as ds

    root = Path(root)
    if form not in FORMS:
        raise StoreError(f"unknown form {form!r} (expected one of {', '.join(FORMS)})")
    parts = [p for p in (manifest or read_manifest(root))["partitions"]
             if p["form"] == form and (hamming is None or p["hamming"] == hamming)]
    hammings = sorted({p["hamming"] for p in parts} | ({hamming} if hamming is not None else set()))
    columns = [f.with_nullable(True) for f in FORM_SCHEMA[form](max(hammings, default=1))]
    fmt = ds.ParquetFileFormat(default_fragment_scan_options=ds.ParquetFragmentScanOptions(
        page_checksum_verification=verify_pages))
    return ds.dataset([str(root / p["path"] / f["file"]) for p in parts for f in p["files"]],
                      schema=pa.schema(list(columns) + list(PARTITION_SCHEMA)), format=fmt,
                      partitioning=ds.partitioning(PARTITION_SCHEMA, flavor="hive"),
                      partition_base_dir=str(root / form))


def store_instance(store: str | Path, instance: str | None = None) -> str:
    """The id `instance` names (an id or a piece file, `instance_id`), or without it the
    store's only instance (MissingInstanceError naming the ids when it holds several or
    none): the instance a command on a store reads."""
    if instance is not None:
        return instance_id(instance)
    ids = sorted({p["instance"] for p in read_manifest(Path(store))["partitions"]})
    if len(ids) != 1:
        raise MissingInstanceError(f"the store holds {len(ids)} instances; give --instance "
                                   f"({', '.join(ids)})")
    return ids[0]

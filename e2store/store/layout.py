"""The store's on-disk layout, declared once: paths, names, format version, Arrow schemas.

The store is hive-partitioned Parquet + zstd with a manifest (docs/store-format.md).

Layout (declared once, here)::

    STORE/manifest.json                                  every partition, aggregated
    STORE/instances/<id>.e2s                             each instance (canonical format)
    STORE/<form>/hamming=<h>/instance=<id>/zone=<z>/rotation=<r>/<stem>-00000.parquet ...
    STORE/<form>/hamming=<h>/instance=<id>/zone=<z>/rotation=<r>/_partition[.<form>].json

Each form has its own subtree and each hamming its own schema, so `STORE/<form>/hamming=<h>`
is one dataset of one schema for any Parquet reader (`form_glob`): the records start with
`_`, work in progress (`.staging`, `.shards`, `.lock`) with `.`, where scanners do not look.

A flat row is one corolle: columns `s0..s{S-1}` (int16 packed `piece*4+r` in ring order,
-1 off the board); the frontier is computed on read.  Partition values live in the path
only.  Every JSON file carries its own digest (`e2store.store.records`).  A partition is
built under `STORE/.staging/` and its files moved into place with its record last, so a
killed run never leaves a partial partition visible; a rerun skips complete partitions and
finishes the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from e2store.errors import StoreVersionError
from e2store.store.defaults import FORMS as FORMS  # the storage forms, declared there
from e2store.store.defaults import RAW_FORMS as RAW_FORMS
from e2store.zones.geometry import (
    frontier_layout,
    n_frontier,
    n_slots,
    ring_offsets,
)

FORMAT_VERSION = 4
# the version that last changed the Parquet files (their footers say it): version 4 gave
# the JSON files a digest (e2store.store.records) and left the data files as they were,
# so a store's data checksum did not change
FILE_FORMAT_VERSION = 3
# version 1 kept every form of a partition in one directory, STORE/instance=<id>/hamming=<h>/
# zone=<z>/rotation=<r>/, with the instance at STORE/instance=<id>/instance.e2s; version 2
# stored the frontier colours `f*` in the flat and distinct rows and dictionary-encoded
# them; version 3 had JSON files without a digest (`e2store migrate --store STORE` brings
# any of them to version 4; e2store.store.migrate)


FORM_FILE = {"flat": "part", "prefix": "prefix", "cartesian": "cartesian", "distinct": "distinct"}


MANIFEST = "manifest.json"


PARTITION_META = "_partition.json"


STAGING = ".staging"


LOCK = ".lock"


ROWS_PER_FILE = 1 << 25


STORE_CHUNK_ROWS = 1 << 20  # rows per chunk = per row group


ZSTD_LEVEL = 3


INSTANCES = "instances"


def partition_dir(root: Path, instance_id: str, hamming: int, zone: int, rotation: int,
                  form: str) -> Path:
    """The directory of one form of one partition."""
    return (Path(root) / form / f"hamming={hamming}" / f"instance={instance_id}"
            / f"zone={zone}" / f"rotation={rotation}")


def instance_path(root: Path, instance_id: str) -> Path:
    """The instance file a store keeps for each instance it holds."""
    return Path(root) / INSTANCES / f"{instance_id}.e2s"


def form_glob(form: str, hamming: int | str = "*") -> str:
    """The glob, relative to the store, of every data file of `form` (at `hamming`): with a
    hamming given, exactly one form's rows under one schema (docs/store-format.md)."""
    return (f"{form}/hamming={hamming}/instance=*/zone=*/rotation=*/"
            f"{FORM_FILE[form]}-*.parquet")


def check_layout(root: Path, *, manifest: bool = False) -> None:
    """StoreVersionError, naming `e2store migrate`, if `root` holds a version-1 store
    (its partitions under STORE/instance=<id>/), or with `manifest` a manifest of an older
    version (a half-migrated store's says the oldest version of a partition in it):
    reading it or writing into it as the current version would see half a store."""
    old = next(Path(root).glob("instance=*"), None)
    if old is not None:
        raise StoreVersionError(
            f"{root}: a store of format version 1 ({old.name}/ holds its partitions); this "
            f"e2store reads version {FORMAT_VERSION}: run `e2store migrate --store {root}` to "
            f"bring it to version {FORMAT_VERSION}")
    if manifest:
        try:
            version = json.loads((Path(root) / MANIFEST).read_bytes()).get("format_version", 0)
        except (OSError, ValueError, AttributeError, RecursionError):
            return  # none yet, or unreadable: the reader says so
        if isinstance(version, int) and 0 < version < FORMAT_VERSION:
            raise StoreVersionError(
                f"{Path(root) / MANIFEST}: format version {version}; this e2store writes "
                f"{FORMAT_VERSION}: run `e2store migrate --store {root}`")


def record_paths(root: Path) -> list[Path]:
    """The completion record of every partition of every form, sorted."""
    return sorted(p for form in FORMS for p in (Path(root) / form).glob(
        f"hamming=*/instance=*/zone=*/rotation=*/{meta_name(form)}"))


def meta_name(form: str) -> str:
    """The completion record of one form of a partition."""
    return PARTITION_META if form == "flat" else f"_partition.{form}.json"


def flat_schema(hamming: int, metadata: dict[str, str] | None = None, *,
                frontier: bool = False) -> pa.Schema:
    """Arrow schema of a flat partition at hamming h: the slot columns `s*`, never null.

    The frontier is not stored (format version 3): it is a function of the cells
    (`e2store.corolles.forms.frontier_of`), and storing it cost more than half the
    encoding.  `frontier` adds the `f*` columns, for files written outside the store (an
    export, a region file)."""
    fields = [pa.field(f"s{i}", pa.int16(), nullable=False) for i in range(n_slots(hamming))]
    if frontier:
        fields += [pa.field(f"f{i}", pa.int8(), nullable=False)
                   for i in range(n_frontier(hamming))]
    return pa.schema(fields, metadata=metadata)


def writer_options(form: str) -> dict:
    """`pyarrow.parquet.ParquetWriter` options of a form's files (declared once).

    flat and distinct rows are PLAIN-encoded, not dictionary-encoded: in depth-first order
    zstd already finds their repeats, and the dictionary's hashing of every value cost 1.9x
    the encoding time for 2.5x smaller files (benchmarks/storage.py; docs/benchmarks.md).
    zstd level 1 makes files as small as level 3 here, faster; pages of 4 MiB (a row group's
    column, 1 Mi rows) make fewer zstd contexts (a new one per page).  The prefix form keeps
    dictionaries and v1 pages (its null runs are smaller so)."""
    common = dict(compression="zstd", compression_level=ZSTD_LEVEL, write_statistics=False,
                  write_page_checksum=True)
    if form == "prefix":
        return {**common, "use_dictionary": True, "data_page_version": "1.0"}
    if form in ("flat", "distinct"):
        return {**common, "compression_level": 1, "use_dictionary": False,
                "data_page_version": "2.0", "data_page_size": 4 << 20,
                "write_batch_size": 1 << 16}
    return {**common, "use_dictionary": True, "data_page_version": "2.0"}


def layout_metadata(form: str, instance_id: str, hamming: int, zone: int, rotation: int,
                    ) -> dict[str, str]:
    """Parquet key-value metadata: enough for a reader to check what it opened."""
    fslots, fsides = frontier_layout(hamming)
    return {
        "e2store.format_version": str(FILE_FORMAT_VERSION),
        "e2store.form": form,
        "e2store.instance": instance_id,
        "e2store.hamming": str(hamming),
        "e2store.zone": str(zone),
        "e2store.rotation": str(rotation),
        "e2store.slots": json.dumps(ring_offsets(hamming).tolist()),
        "e2store.frontier": json.dumps(
            [[int(a), int(b)] for a, b in zip(fslots, fsides, strict=True)]
        ),
    }


def distinct_schema(hamming: int, metadata: dict[str, str] | None = None) -> pa.Schema:
    """A distinct row: the flat columns of one distinct corolle (identical pieces
    interchangeable, symmetric rotations merged; e2store.instance.classes), then
    `multiplicity` (int64), the raw corolles it stands for."""
    return flat_schema(hamming, metadata).append(pa.field("multiplicity", pa.int64(),
                                                          nullable=False))


def prefix_schema(hamming: int, metadata: dict[str, str] | None = None) -> pa.Schema:
    """`shared` then the flat slot columns, null where the slot equals the previous row's."""
    fields = [("shared", pa.int8())] + [(f"s{i}", pa.int16()) for i in range(n_slots(hamming))]
    return pa.schema(fields, metadata=metadata)


def cartesian_schema(hamming: int, metadata: dict[str, str] | None = None) -> pa.Schema:
    s_in = n_slots(hamming - 1) if hamming > 0 else 0
    fields = [(f"s{i}", pa.int16()) for i in range(s_in)] + [("corolles", pa.int64())]
    fields += [(f"c{k}", pa.list_(pa.int16())) for k in range(4 * hamming if hamming else 1)]
    return pa.schema(fields, metadata=metadata)


# the query layer's tables built from JSON records (e2store.query) --------------------------

PARTITION_SCHEMA = pa.schema([("instance", pa.string()), ("hamming", pa.int32()),
                              ("zone", pa.int32()), ("rotation", pa.int32())])  # hive keys

MANIFEST_VIEW_SCHEMA = pa.schema([
    ("instance", pa.string()), ("hamming", pa.int32()), ("zone", pa.int32()),
    ("rotation", pa.int32()), ("form", pa.string()), ("x", pa.int32()), ("y", pa.int32()),
    ("cells", pa.int32()), ("canonical_x", pa.int32()), ("canonical_y", pa.int32()),
    ("rows", pa.int64()), ("corolles", pa.int64()), ("nodes", pa.int64()),
    ("seconds", pa.float64()), ("bytes", pa.int64()), ("files", pa.int32()),
])
INSTANCES_VIEW_SCHEMA = pa.schema([("instance", pa.string()), ("name", pa.string()),
                                   ("width", pa.int32()), ("height", pa.int32()),
                                   ("pieces", pa.int32())])


"""The corolle store: hive-partitioned Parquet + zstd with a manifest (docs/store-format.md).

* `layout`: paths, names, format version and every Arrow schema, declared once;
* `write`: staging runs, locks, atomic publication, completion records, the manifest;
* `read`: the manifest, records and partitions of any form as flat rows;
* `build`: a zone's partitions from one walk (`enumerate_store`, `enumerate_zone`);
* `stages`: the same work cut into the pipeline's jobs (shards, gather, rotate, encode);
* `migrate`: a store of an older format version moved to the current one.

The public names of those modules are also reachable here (`e2store.store.read_partition`);
each submodule is imported on first use, so `import e2store.store` loads no kernel.
"""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.store.build import enumerate_store as enumerate_store
    from e2store.store.build import enumerate_zone as enumerate_zone
    from e2store.store.layout import FORM_FILE as FORM_FILE
    from e2store.store.layout import FORMAT_VERSION as FORMAT_VERSION
    from e2store.store.layout import FORMS as FORMS
    from e2store.store.layout import LOCK as LOCK
    from e2store.store.layout import MANIFEST as MANIFEST
    from e2store.store.layout import PARTITION_META as PARTITION_META
    from e2store.store.layout import RAW_FORMS as RAW_FORMS
    from e2store.store.layout import ROWS_PER_FILE as ROWS_PER_FILE
    from e2store.store.layout import STAGING as STAGING
    from e2store.store.layout import STORE_CHUNK_ROWS as STORE_CHUNK_ROWS
    from e2store.store.layout import ZSTD_LEVEL as ZSTD_LEVEL
    from e2store.store.layout import cartesian_schema as cartesian_schema
    from e2store.store.layout import check_layout as check_layout
    from e2store.store.layout import distinct_schema as distinct_schema
    from e2store.store.layout import flat_schema as flat_schema
    from e2store.store.layout import form_glob as form_glob
    from e2store.store.layout import instance_path as instance_path
    from e2store.store.layout import layout_metadata as layout_metadata
    from e2store.store.layout import meta_name as meta_name
    from e2store.store.layout import partition_dir as partition_dir
    from e2store.store.layout import prefix_schema as prefix_schema
    from e2store.store.layout import record_paths as record_paths
    from e2store.store.layout import writer_options as writer_options
    from e2store.store.migrate import migrate_store as migrate_store
    from e2store.store.migrate import store_version as store_version
    from e2store.store.read import ExpandedPartition as ExpandedPartition
    from e2store.store.read import check_file_hash as check_file_hash
    from e2store.store.read import check_file_metadata as check_file_metadata
    from e2store.store.read import checked_files as checked_files
    from e2store.store.read import checked_paths as checked_paths
    from e2store.store.read import damaged as damaged
    from e2store.store.read import dataset as dataset
    from e2store.store.read import expand_partition as expand_partition
    from e2store.store.read import iter_partition as iter_partition
    from e2store.store.read import read_distinct as read_distinct
    from e2store.store.read import read_manifest as read_manifest
    from e2store.store.read import read_partition as read_partition
    from e2store.store.read import read_record as read_record
    from e2store.store.read import read_store_instance as read_store_instance
    from e2store.store.read import store_instance as store_instance
    from e2store.store.write import FileSeq as FileSeq
    from e2store.store.write import PartitionResult as PartitionResult
    from e2store.store.write import check_rotations as check_rotations
    from e2store.store.write import clean_staging as clean_staging
    from e2store.store.write import file_lock as file_lock
    from e2store.store.write import partition_record as partition_record
    from e2store.store.write import publish_partition as publish_partition
    from e2store.store.write import result_of as result_of
    from e2store.store.write import staging_run as staging_run
    from e2store.store.write import store_lock as store_lock
    from e2store.store.write import write_flat_file as write_flat_file
    from e2store.store.write import write_instance_file as write_instance_file
    from e2store.store.write import write_manifest as write_manifest

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "layout": ("FORMAT_VERSION", "FORMS", "FORM_FILE", "LOCK", "MANIFEST", "PARTITION_META",
               "RAW_FORMS", "ROWS_PER_FILE", "STAGING", "STORE_CHUNK_ROWS", "ZSTD_LEVEL",
               "cartesian_schema", "distinct_schema", "flat_schema", "layout_metadata",
               "meta_name", "partition_dir", "prefix_schema", "form_glob", "instance_path",
               "record_paths", "check_layout", "writer_options"),
    "read": ("dataset", "check_file_hash", "check_file_metadata", "checked_files",
             "checked_paths", "damaged",
             "iter_partition", "read_distinct", "read_manifest",
             "read_partition", "read_record", "read_store_instance", "store_instance",
             "ExpandedPartition", "expand_partition"),
    "write": ("FileSeq", "PartitionResult", "check_rotations", "clean_staging", "file_lock",
              "partition_record", "publish_partition", "result_of", "staging_run", "store_lock",
              "write_flat_file", "write_instance_file", "write_manifest"),
    "build": ("enumerate_store", "enumerate_zone"),
    "migrate": ("migrate_store", "store_version"),
})

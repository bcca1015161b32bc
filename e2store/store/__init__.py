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

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "layout": ("FORMAT_VERSION", "FORMS", "FORM_FILE", "LOCK", "MANIFEST", "PARTITION_META",
               "RAW_FORMS", "ROWS_PER_FILE", "STAGING", "STORE_CHUNK_ROWS", "ZSTD_LEVEL",
               "cartesian_schema", "distinct_schema", "flat_schema", "layout_metadata",
               "meta_name", "partition_dir", "prefix_schema", "form_glob", "instance_path",
               "record_paths", "check_layout", "writer_options"),
    "read": ("dataset", "check_file_hash", "check_file_metadata", "checked_files",
             "checked_paths", "damaged",
             "iter_partition", "read_distinct", "read_manifest",
             "read_partition", "read_record", "read_store_instance"),
    "write": ("FileSeq", "PartitionResult", "check_rotations", "clean_staging", "file_lock",
              "partition_record", "publish_partition", "result_of", "staging_run", "store_lock",
              "write_flat_file", "write_instance_file", "write_manifest"),
    "build": ("enumerate_store", "enumerate_zone"),
    "migrate": ("migrate_store", "store_version"),
})

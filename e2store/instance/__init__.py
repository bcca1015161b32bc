"""Puzzle instances: the `Instance` model, piece-file readers and the e2store format,
the instance generator, validation and statistics (docs/design.md sections 1 and 7)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "model": ("GREY", "SIDES", "Instance",),
    "formats": ("FORMATS", "DEFAULT_SIDES", "detect_format", "read_instance",
            "convert_instance", "read_brendan_solution",),
    "e2sfile": ("read_e2store", "format_e2store", "write_e2store",),
    "generate": ("generate_instance", "GenerationWarning",),
    "validate": ("Finding", "check_instance", "validate_or_raise", "piece_kinds",),
    "stats": ("instance_stats", "format_stats",),
})

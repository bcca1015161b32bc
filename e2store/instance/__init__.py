"""Puzzle instances: the `Instance` model, piece-file readers and the e2store format,
the instance generator, validation and statistics (docs/design.md sections 1 and 7)."""

from typing import TYPE_CHECKING

from e2store.lazy import lazy_exports

if TYPE_CHECKING:  # the real names for type checkers; at run time each is imported on first use
    from e2store.instance.e2sfile import format_e2store as format_e2store
    from e2store.instance.e2sfile import read_e2store as read_e2store
    from e2store.instance.e2sfile import write_e2store as write_e2store
    from e2store.instance.formats import DEFAULT_SIDES as DEFAULT_SIDES
    from e2store.instance.formats import FORMATS as FORMATS
    from e2store.instance.formats import convert_instance as convert_instance
    from e2store.instance.formats import detect_format as detect_format
    from e2store.instance.formats import instance_id as instance_id
    from e2store.instance.formats import instance_ids as instance_ids
    from e2store.instance.formats import read_brendan_solution as read_brendan_solution
    from e2store.instance.formats import read_instance as read_instance
    from e2store.instance.generate import GenerationWarning as GenerationWarning
    from e2store.instance.generate import generate_instance as generate_instance
    from e2store.instance.generate import write_generated_instance as write_generated_instance
    from e2store.instance.model import GREY as GREY
    from e2store.instance.model import SIDES as SIDES
    from e2store.instance.model import Instance as Instance
    from e2store.instance.stats import format_stats as format_stats
    from e2store.instance.stats import instance_stats as instance_stats
    from e2store.instance.validate import Finding as Finding
    from e2store.instance.validate import check_instance as check_instance
    from e2store.instance.validate import piece_kinds as piece_kinds
    from e2store.instance.validate import validate_or_raise as validate_or_raise

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "model": ("GREY", "SIDES", "Instance",),
    "formats": ("FORMATS", "DEFAULT_SIDES", "detect_format", "read_instance",
            "convert_instance", "read_brendan_solution", "instance_id",
            "instance_ids",),
    "e2sfile": ("read_e2store", "format_e2store", "write_e2store",),
    "generate": ("generate_instance", "GenerationWarning", "write_generated_instance",),
    "validate": ("Finding", "check_instance", "validate_or_raise", "piece_kinds",),
    "stats": ("instance_stats", "format_stats",),
})

"""Corolle geometry (ring order, rotation, frontier) and zones: cells whose corolles have
the same shape up to a quarter turn (docs/design.md sections 2 and 3)."""

from e2store.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "geometry": ("n_slots", "n_frontier", "ring_offsets", "rotation_permutation",
            "frontier_layout", "SIDE_STEP",),
    "zonemap": ("Member", "Zone", "ZoneMap", "zone_map", "expected_zone_count",),
})

"""Lazy package facades: a stage package names its public API once and imports a submodule
only when one of its names is first used, so `import e2store.solver` (say) loads no numba."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, api: Mapping[str, tuple[str, ...]],
                 ) -> tuple[list[str], Callable[[str], object], Callable[[], list[str]]]:
    """(`__all__`, `__getattr__`, `__dir__`) for `package` from {submodule: names}."""
    where = {name: module for module, names in api.items() for name in names}

    def __getattr__(name: str) -> object:
        if name in where:
            return getattr(importlib.import_module(f"{package}.{where[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(where)

    return sorted(where), __getattr__, __dir__

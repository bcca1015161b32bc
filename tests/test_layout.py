"""The package's structure: stages import one way, and only public names cross modules.

Stages (docs/design.md, section 8): the shared base modules, then instance -> zones ->
corolles -> store -> query -> solver, with reports and the exact models beside the
solver, the count tables above them, the web explorer above those and the command line on
top.  A module may
import from its own subpackage and from lower stages only.  A name with a leading
underscore is private to its module; a private module (`_kernels`, `_unrolled`...) is
private to its subpackage.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "e2store"
BASE = {"", "errors", "files", "bits", "progress", "lazy", "processes", "__init__", "__main__"}
RANK = {"instance": 1, "zones": 2, "corolles": 3, "store": 4, "query": 5, "solver": 6,
        "reports": 6, "exact": 6, "counts": 7, "web": 8, "cli": 9}
MAX_LINES = 520  # "about 500"; kernel modules (`_*kernels.py`) are exempt


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts)
        out.append((name.removesuffix(".__init__"), path))
    return out


MODULES = dict(_modules())


def _stage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _rank(stage: str) -> int:
    return 0 if stage in BASE else RANK[stage]


def _is_module(name: str) -> bool:
    return name in MODULES


def _imports(module: str, path: Path):
    """(line, imported module, imported name or None) for every e2store import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("e2store"):
                    yield node.lineno, a.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            if not base.startswith("e2store"):
                continue
            for a in node.names:
                yield node.lineno, base, a.name


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def test_every_stage_is_known():
    stages = {_stage(m) for m in MODULES} - BASE - {""}
    assert stages <= set(RANK), f"add the new stage(s) to RANK: {stages - set(RANK)}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_one_way_and_stay_public(module):
    path = MODULES[module]
    problems = []
    own = _stage(module)
    for line, target, name in _imports(module, path):
        full = f"{target}.{name}" if name and _is_module(f"{target}.{name}") else target
        stage = _stage(full)
        where = f"{path.relative_to(PACKAGE.parent)}:{line}"
        if stage != own and own not in BASE and stage not in BASE and _rank(stage) >= _rank(own):
            problems.append(f"{where}: {own} imports {full} (stage {stage} is not below {own})")
        if own in BASE and stage not in BASE and module not in ("e2store", "e2store.__main__"):
            problems.append(f"{where}: base module imports stage {stage}")
        private_mod = [p for p in full.split(".") if _private(p)]
        if private_mod and stage != own:
            problems.append(f"{where}: private module {full} imported from another stage")
        if name and _private(name) and not _is_module(f"{target}.{name}"):
            problems.append(f"{where}: private name {name} imported from {target}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_private_attribute_of_another_module(module):
    """`mod._name` on an imported e2store module reaches into its privates."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("e2store"):
            for a in node.names:
                if _is_module(f"{node.module}.{a.name}"):
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("e2store") and a.asname:
                    aliases.add(a.asname)
    bad = [f"{path.name}:{n.lineno}: {n.value.id}.{n.attr}" for n in ast.walk(tree)
           if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
           and n.value.id in aliases and _private(n.attr)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_short(module):
    path = MODULES[module]
    if path.name.endswith("kernels.py"):
        return
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)} has {n} lines: split it"


def test_light_modules_do_not_load_numba():
    """The query layer, the instance readers and the zones start without numba, pyarrow
    loads only where Parquet is touched, and matplotlib only for plots."""
    code = ("import sys, e2store.query, e2store.instance.formats, e2store.zones.zonemap, "
            "e2store.instance.validate, e2store.instance.stats, e2store.store.read, "
            "e2store.solver, e2store.corolles.forms\n"
            "e2store.query.connect, e2store.query.CorolleStore, e2store.solver.SCAN_ORDERS\n"
            "bad = [m for m in ('numba', 'matplotlib') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

"""The package's structure: stages import one way, and only public names cross modules.

Stages (docs/design.md, section 8): the shared base modules, then instance -> zones ->
corolles -> store (the boards database beside it) -> query -> solver, with the reports
beside the solver, the campaigns and the count tables above them, the exact models and the
web explorer above those and the command line on top.  A module may import from its own
subpackage and from lower stages only.  A name with a leading underscore is private to its
module; a private module (`_kernels`, `_unrolled`...)
is private to its subpackage, and a package nested in a stage (`e2store.solver.best`) is
one unit: imported from outside only through its `__init__`, by the names of its `__all__`.
No import cycle, lazy imports counted; a command module of the cli imports no other one;
the benchmarks use public names only.  And the docs: every page in the index, every module
in design.md's map.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "e2store"
BASE = {"", "errors", "files", "bits", "progress", "lazy", "processes", "__init__", "__main__"}
RANK = {"instance": 1, "zones": 2, "corolles": 3, "store": 4, "query": 5, "solver": 6,
        "cover": 7,
        "boards": 4, "reports": 6, "campaign": 7, "exact": 8, "counts": 7, "web": 8, "cli": 9}
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


# -- no import cycle ---------------------------------------------------------------------

REGISTERED = re.compile(r"(e2store(?:\.\w+)+):(\w+)")  # "module:attr": a command by name


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _target(target: str, name: str | None) -> str:
    """The module an import of `name` from `target` loads (`target.name` if a module)."""
    return f"{target}.{name}" if name and _is_module(f"{target}.{name}") else target


def _loads(module: str, path: Path):
    """(line, module, name or None) for every e2store module `module` loads: its import
    statements anywhere (in functions, under TYPE_CHECKING), the commands it registers by
    name ("module:attr", the cli's lazy groups) and a lazy facade's submodules
    (`lazy_exports`, one entry per exported name)."""
    yield from _imports(module, path)
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = REGISTERED.fullmatch(node.value)
            if m and _is_module(m.group(1)):
                yield node.lineno, m.group(1), m.group(2)
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_exports"
              and len(node.args) == 2 and isinstance(node.args[1], ast.Dict)):
            for key, value in zip(node.args[1].keys, node.args[1].values, strict=True):
                names = [e.value for e in getattr(value, "elts", [])
                         if isinstance(e, ast.Constant)]
                for name in names:
                    yield node.lineno, f"{module}.{key.value}", name


@functools.cache
def _graph() -> dict[str, dict[str, list[int]]]:
    """module -> {module it loads: lines}."""
    graph: dict[str, dict[str, list[int]]] = {m: {} for m in MODULES}
    for module, path in MODULES.items():
        for line, target, name in _loads(module, path):
            full = _target(target, name)
            if full in MODULES and full != module:
                graph[module].setdefault(full, []).append(line)
    return graph


def _components(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _where(module: str) -> str:
    return str(MODULES[module].relative_to(ROOT)) if module in MODULES else module


def _cycles(graph: dict[str, dict[str, list[int]]], comp: list[str]) -> list[str]:
    """The shortest cycle through each module of `comp`, each once, as
    `file:lines -> file:lines -> ... -> file` (the lines hold the imports to break)."""
    inside = set(comp)
    seen, out = set(), []
    for start in comp:
        prev = {start: None}
        queue, found = [start], None
        while queue and found is None:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w == start:
                    found = v
                    break
                if w in inside and w not in prev:
                    prev[w] = v
                    queue.append(w)
        path = [start]
        v = found
        while v is not None and v != start:
            path.append(v)
            v = prev[v]
        path = [start] + path[:0:-1]
        i = path.index(min(path))
        key = tuple(path[i:] + path[:i])
        if key in seen:
            continue
        seen.add(key)
        hops = [f"{_where(a)}:{','.join(map(str, graph[a][b]))}"
                for a, b in zip(key, key[1:] + key[:1], strict=True)]
        out.append(" -> ".join(hops + [_where(key[0])]))
    return out


def test_no_import_cycle():
    """No module loads, even lazily, a module that loads it back.  Edges: import statements
    anywhere, commands registered by name ("module:attr") and lazy facades' submodules;
    not the implicit import of a submodule's parent package."""
    graph = _graph()
    cycles = [c for comp in _components(graph) for c in _cycles(graph, comp)]
    assert not cycles, "import cycles (file:line of each import):\n" + "\n".join(cycles)


# -- cli: a command module imports no other ----------------------------------------------

CLI = "e2store.cli"
CLI_HELPERS = {f"{CLI}.command", f"{CLI}.options", f"{CLI}.checked", f"{CLI}.formats"}
CLI_MAY = {f"{CLI}.reference": {f"{CLI}.main"},  # walks the commands to write docs/cli.md
           # the options of its --best mode; which engine it takes
           f"{CLI}.solve": {f"{CLI}.best_options", f"{CLI}.engines"},
           CLI: {f"{CLI}.main"}}  # the package's entry point


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _stage(m) == "cli"))
def test_cli_modules_import_no_other_command(module):
    """A cli module imports (statements, lazy ones too) only the shared helpers; `main`
    may import the command modules and `reference` imports `main`.  The groups' tables of
    commands by name (`main.COMMANDS`, `stage.STAGES`) are registrations, not imports."""
    path = MODULES[module]
    bad = []
    for line, target, name in _imports(module, path):
        full = _target(target, name)
        if (_stage(full) != "cli" or full == module or full in CLI_HELPERS
                or module == f"{CLI}.main" or full in CLI_MAY.get(module, ())):
            continue
        bad.append(f"{path.relative_to(ROOT)}:{line}: imports {full}")
    bad = list(dict.fromkeys(bad))
    assert not bad, ("a cli module imports only the shared helpers "
                     f"({', '.join(sorted(CLI_HELPERS))}):\n" + "\n".join(bad))


# -- a package nested in a stage is a unit -----------------------------------------------

UNITS = sorted(".".join(d.relative_to(ROOT).parts) for d in PACKAGE.glob("*/*")
               if d.is_dir() and any(d.glob("*.py")))
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))


def _api(path: Path) -> set[str] | None:
    """The names of `__all__` of an `__init__.py`, read without importing it: a literal
    list or tuple, or `lazy_exports`' names; None when neither is there."""
    for node in _tree(path).body:
        if not isinstance(node, ast.Assign):
            continue
        targets = [t for n in node.targets for t in (getattr(n, "elts", None) or [n])]
        if not any(getattr(t, "id", None) == "__all__" for t in targets):
            continue
        if isinstance(node.value, (ast.List, ast.Tuple)):
            return {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
        if (isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "lazy_exports"):
            return {e.value for v in node.value.args[1].values for e in v.elts}
    return None


@pytest.mark.parametrize("unit", UNITS)
def test_nested_package_is_a_unit(unit):
    """From outside it (the package's other modules, the benchmarks), a nested package is
    imported only through its `__init__`, and only names of its `__all__`; its modules, the
    private ones (`_gen`, `_kernels`) above all, are its own."""
    init = ROOT.joinpath(*unit.split(".")) / "__init__.py"
    assert init.exists(), f"{init.relative_to(ROOT)} is missing: a nested package needs one"
    api = _api(init)
    assert api, f"{init.relative_to(ROOT)}: no __all__ (a list, or lazy_exports)"
    sources = [(m, p) for m, p in MODULES.items() if m != unit and not m.startswith(unit + ".")]
    sources += [(f"benchmarks.{p.stem}", p) for p in BENCHMARKS]
    bad = []
    for module, path in sources:
        for line, target, name in _loads(module, path):
            full = _target(target, name)
            where = f"{path.relative_to(ROOT)}:{line}"
            if full.startswith(unit + "."):
                bad.append(f"{where}: imports {full} (import from {unit})")
            elif target == unit and name and name != "*" and name not in api:
                bad.append(f"{where}: imports {name} from {unit}, not in its __all__")
    assert not bad, "\n".join(dict.fromkeys(bad))


# -- benchmarks use public names only ----------------------------------------------------

def _e2store_aliases(tree: ast.Module) -> set[str]:
    """Local names bound to e2store modules by imports."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("e2store"):
            out |= {a.asname or a.name for a in node.names
                    if _is_module(f"{node.module}.{a.name}")}
        elif isinstance(node, ast.Import):
            out |= {a.asname or a.name.split(".")[0] for a in node.names
                    if a.name.startswith("e2store")}
    return out


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_benchmarks_use_public_names(path):
    """A benchmark measures the product through its public names (a kernel through its
    validating wrapper): no private module or name of e2store, no `mod._name`, no cli."""
    module = f"benchmarks.{path.stem}"
    bad = []
    for line, target, name in _imports(module, path):
        full = _target(target, name)
        where = f"{path.name}:{line}"
        if any(_private(p) for p in full.split(".")):
            bad.append(f"{where}: private module {full}")
        elif name and _private(name):
            bad.append(f"{where}: private name {name} of {target}")
        if _stage(full) == "cli":
            bad.append(f"{where}: imports the command line ({full}): run `e2store ...` "
                       f"or call the library")
    tree = _tree(path)
    aliases = _e2store_aliases(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in aliases:
                bad.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, "\n".join(dict.fromkeys(bad))


# -- docs: the index lists every page, design.md maps every module -----------------------

DOCS = ROOT / "docs"


def test_docs_index_links_every_page():
    index = (DOCS / "README.md").read_text()
    linked = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert not pages - linked, f"docs/README.md does not link {sorted(pages - linked)}"
    assert not linked - pages, f"docs/README.md links missing pages {sorted(linked - pages)}"


def _module_map() -> dict[str, set[str]]:
    """docs/design.md section 8's table: subpackage -> the module names its row lists."""
    text = (DOCS / "design.md").read_text()
    section = text.split("## 8.", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and re.fullmatch(r"\s*`e2store[\w.]*`\s*", cells[1]):
            out[cells[1].strip(" `")] = set(re.findall(r"`([\w.]+/?)`", cells[2]))
    return out


def test_design_maps_every_module():
    """Section 8 of docs/design.md lists every module of the package in its subpackage's row
    (a nested package has its own row, and its parent's row names it `best/`), and only
    modules that exist."""
    table = _module_map()
    missing, stale = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        package = ".".join(path.parent.relative_to(ROOT).parts)
        if package not in table:
            if f"{package} (no row)" not in missing:
                missing.append(f"{package} (no row)")
        elif path.stem != "__init__" and path.stem not in table[package]:
            missing.append(f"{package}: {path.stem}")
    for unit in UNITS:
        parent, _, name = unit.rpartition(".")
        if f"{name}/" not in table.get(parent, ()):
            missing.append(f"{parent}: {name}/")
    for package, names in table.items():
        here = ROOT.joinpath(*package.split("."))
        for name in names:
            if not ((here / f"{name}.py").exists() or (here / name.rstrip("/")).is_dir()):
                stale.append(f"{package}: {name}")
        if not here.is_dir():
            stale.append(f"{package} (no such package)")
    assert not missing, f"docs/design.md section 8 does not name {missing}"
    assert not stale, f"docs/design.md section 8 names modules that do not exist: {stale}"

"""The typed public API (issue 47): mypy is clean over the package's public modules, and
each lazily exporting `__init__` shows type checkers the names it exports at run time.

The private modules (`_kernels.py`, `_unrolled.py`...: numba kernels) are not checked, but
their types are read where a public module imports them.  mypy's settings are in
pyproject.toml (`[tool.mypy]`).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "e2store"


def _private(path: Path) -> bool:
    return path.name.startswith("_") and path.stem not in ("__init__", "__main__")


def public_modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if not _private(p) and "__pycache__" not in p.parts)


def test_mypy_is_clean_on_the_public_modules(tmp_path):
    pytest.importorskip("mypy")
    files = [str(p.relative_to(ROOT)) for p in public_modules()]
    assert "e2store/lazy.py" in files and not any(Path(f).name == "_kernels.py" for f in files)
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
           "--cache-dir", str(tmp_path / "mypy_cache"), "--no-color-output",
           "--no-error-summary", *files]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    output = (run.stdout + run.stderr).strip()
    assert run.returncode == 0, f"mypy found problems:\n{output}"


def _lazy_api(tree: ast.Module) -> dict[str, set[str]] | None:
    """{submodule: names} of the module's `lazy_exports(__name__, {...})` call, if any."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "lazy_exports"):
            try:
                return {k: set(v) for k, v in ast.literal_eval(node.args[1]).items()}
            except (ValueError, IndexError):
                return None
    return None


def _type_checking_imports(tree: ast.Module, package: str) -> dict[str, set[str]]:
    """{module: names} the `__init__` of `package` imports under `if TYPE_CHECKING:` as
    `name as name` (an explicit re-export: a plain import is not one under mypy --strict)."""
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) \
                and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom):
                    base = package.split(".")[:len(package.split(".")) - imp.level + 1]
                    module = (".".join([*base, *([imp.module] if imp.module else [])])
                              if imp.level else imp.module or "")
                    out.setdefault(module, set()).update(
                        a.name for a in imp.names if a.asname == a.name)
    return out


LAZY = sorted(str(p.relative_to(ROOT)) for p in PACKAGE.rglob("__init__.py")
              if "lazy_exports(" in p.read_text())


@pytest.mark.parametrize("init", LAZY)
def test_lazy_exports_are_visible_to_type_checkers(init):
    """The names a lazy `__init__` exports (`lazy_exports`: imported on first use) are the
    names its `if TYPE_CHECKING:` block imports (`from pkg.sub import name as name`): what a
    type checker sees is what `import pkg; pkg.name` gives at run time."""
    path = ROOT / init
    tree = ast.parse(path.read_text(), init)
    api = _lazy_api(tree)
    if api is None:
        pytest.skip("lazy_exports is not called with a literal {submodule: names}")
    package = ".".join(path.parent.relative_to(ROOT).parts)
    lazy = {(f"{package}.{module}", name) for module, names in api.items() for name in names}
    seen = {(module, name) for module, names in _type_checking_imports(tree, package).items()
            for name in names}
    missing = [f"    from {m} import {n} as {n}" for m, n in sorted(lazy - seen)]
    extra = [f"{m}.{n}" for m, n in sorted(seen - lazy)]
    assert not missing and not extra, (
        f"{init}: the `if TYPE_CHECKING:` block and lazy_exports disagree"
        + ("\nadd under `if TYPE_CHECKING:`:\n" + "\n".join(missing) if missing else "")
        + ("\nimported for type checkers but not exported: " + ", ".join(extra)
           if extra else ""))

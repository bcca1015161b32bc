"""The rooms of issue 57, measured as anyone can: the boards database and the campaigns are
stages of their own (`e2store.boards`, `e2store.campaign`), the solver holds the search;
the boards schema is declared once; a file name is parsed only by the module that writes
it; a campaign's analysis is computed in one place; the campaign rules import nothing from
the command line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "e2store"
SOLVER_LINES = 6500  # issue 57: the search alone, the boards and campaigns in rooms of their own


def _py(where: Path) -> list[Path]:
    return sorted(where.rglob("*.py"))


def test_the_solver_holds_the_search():
    lines = sum(len(p.read_text().splitlines()) for p in _py(PACKAGE / "solver"))
    assert lines < SOLVER_LINES, f"e2store/solver/ has {lines:,} lines"
    names = {p.stem for p in _py(PACKAGE / "solver")}
    assert not names & {"boards", "boards_read", "boards_parts", "saved_boards",
                        "boards_compact", "boards_dataset", "board_sources", "solutions",
                        "board_keys", "campaign"}


def _literal_sites(needle: str) -> list[str]:
    """The modules of the package whose source holds `needle` outside docstrings and
    comments (string constants and code)."""
    out = []
    for p in _py(PACKAGE):
        tree = ast.parse(p.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef,
                                  ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr)
                and isinstance(n.body[0].value, ast.Constant)}
        if any(isinstance(n, ast.Constant) and isinstance(n.value, str) and needle in n.value
               and id(n) not in docs for n in ast.walk(tree)):
            out.append(str(p.relative_to(ROOT)))
    return out


def test_the_boards_schema_is_declared_once():
    """The format's name and the statistics' columns are written in one module; every
    writer's Arrow schema comes from it."""
    assert _literal_sites("e2store-boards") == ["e2store/boards/schema.py"]
    text = {str(p.relative_to(ROOT)): p.read_text() for p in _py(PACKAGE)}
    stats = [k for k, v in text.items() if re.search(r"\(\"mismatches\", \"int32\"\)", v)]
    assert stats == ["e2store/boards/schema.py"]
    builders = [k for k, v in text.items() if re.search(r"pa\.field\(f\"c\{i\}\"", v)]
    assert builders == [], builders


# names a module writes, and the module: only it may hold a pattern matching them
WRITTEN = {"part-s": "e2store/boards/parts.py", "compact-s": "e2store/boards/parts.py",
           ".seed=": "e2store/boards/parts.py", "-shard-": "e2store/campaign/status.py",
           "_s": "e2store/boards/saved.py"}


@pytest.mark.parametrize("name, writer", sorted(WRITTEN.items()))
def test_a_file_name_is_parsed_by_its_writer_alone(name, writer):
    sites = []
    for p in _py(PACKAGE):
        for m in re.finditer(r"re\.compile\(r?[\"']([^\"']*)", p.read_text()):
            pattern = m[1].replace("\\", "")
            if name in pattern:
                sites.append(str(p.relative_to(ROOT)))
    assert set(sites) <= {writer}, sites


# the analysis' steps, on each arm's restarts folded (`e2store.campaign.tally`); their
# array forms (`arm_stats`, `compare_arms`, `tail_hours`) are for callers outside
ANALYSIS_CALLS = ("arm_stats_of", "compare_counts", "tail_counts")


def test_the_campaign_analysis_is_computed_in_one_place():
    calls = {}
    for p in _py(PACKAGE):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name in ANALYSIS_CALLS and p.name != "stats.py":  # stats: array forms
                    calls.setdefault(name, set()).add(str(p.relative_to(ROOT)))
    assert calls == {k: {"e2store/campaign/analysis.py"} for k in ANALYSIS_CALLS}, calls


def test_the_campaign_rules_import_nothing_from_the_command_line():
    for smk in sorted((ROOT / "pipeline" / "rules").glob("best*.smk")):
        assert "e2store.cli" not in smk.read_text(), smk.name

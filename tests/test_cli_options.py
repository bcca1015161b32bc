"""The command line as a whole: one value per single-value option, the shared parameter
types, the deprecated spellings, start-up imports, and docs/cli.md being up to date."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from e2store import store
from e2store.cli import main
from e2store.cli import options as opts
from e2store.cli.reference import render, walk
from e2store.instance.e2sfile import write_e2store
from e2store.instance.generate import generate_instance

DOCS = Path(__file__).resolve().parents[1] / "docs" / "cli.md"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """A 4x4 instance with few colours: every command below runs in well under a second."""
    path = tmp_path_factory.mktemp("cli") / "g4.e2s"
    write_e2store(generate_instance(4, 4, 2, 3, seed=3, name="g4"), path)
    return path


# -- every single-value option refuses a second value --------------------------------------
def _single_value_options():
    for path, cmd, _ in walk():
        if isinstance(cmd, click.Group):
            continue
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.multiple and not p.count \
                    and not p.is_eager:
                yield pytest.param(path, p, id=f"{' '.join(path)} {p.opts[-1]}")


@pytest.mark.parametrize("path,param", list(_single_value_options()))
def test_a_single_value_option_given_twice_is_a_usage_error(path, param):
    flag = max(param.opts, key=len)
    once = [flag] if param.is_flag else [flag, "1"]
    r = CliRunner().invoke(main, [*path, *once, *once])
    assert r.exit_code == 2, r.output
    assert f"'{flag}' was given 2 times" in r.stderr, r.stderr


def test_the_walk_sees_every_command_and_some_repeatable_options():
    paths = {p for p, _, _ in walk()}
    assert {("count",), ("enumerate",), ("stage",), ("stage", "plan"), ("render", "zones"),
            ("stage", "solve-gather"), ("tabulate",)} <= paths
    multiple = {(p, o.name) for p, c, _ in walk() for o in c.params
                if isinstance(o, click.Option) and o.multiple}
    assert {(("count",), "hammings"), (("enumerate",), "hammings"),
            (("summary",), "output")} <= multiple


def test_every_command_has_help_and_an_example():
    for path, cmd, _ in walk():
        assert cmd.help and cmd.short_help, path
        if not isinstance(cmd, click.Group) or path == ("render",):
            assert "Examples:" in (cmd.epilog or ""), path
        assert "..." not in cmd.get_short_help_str(80), path


def test_top_level_help_does_not_cut_descriptions():
    r = run("--help")
    assert r.exit_code == 0
    for path, cmd, _ in walk():
        if len(path) == 1 and not cmd.hidden:
            assert cmd.short_help.split()[-1] in r.output, path
    assert "stage " not in r.output.split("Commands:")[1].split("Run `")[0]  # hidden
    assert "plan" not in r.output.split("Commands:")[1].split("Run `")[0]


# -- repeatable options are honoured ------------------------------------------------------
def test_enumerate_writes_every_hamming_given(small, tmp_path):
    r = run("enumerate", small, "--hamming", 1, "--hamming", 2, "--store", tmp_path / "s")
    assert r.exit_code == 0, r.output
    parts = store.read_manifest(tmp_path / "s")["partitions"]
    assert {p["hamming"] for p in parts} == {1, 2}
    assert "hamming=1" in r.output and "hamming=2" in r.output


def test_count_counts_every_hamming_given(small):
    r = run("count", small, "--hamming", 0, "--hamming", 1, "--at", "1,1", "--json")
    assert r.exit_code == 0, r.output
    assert [json.loads(ln)["hamming"] for ln in r.stdout.splitlines()] == [0, 1]


def test_count_at_hamming_3_uses_and_equals_the_table_method(tmp_path):
    """`count` picks the count tables' method (arms at hamming 3) and gets their count."""
    from e2store.counts.shards import count_shard

    inst = generate_instance(5, 5, 2, 4, seed=1, name="g5")
    path = tmp_path / "g5.e2s"
    write_e2store(inst, path)
    got = {}
    for method in ("auto", "arms", "factorised"):
        r = run("count", path, "--hamming", 3, "--at", "2,2", "--method", method, "--json")
        assert r.exit_code == 0, r.output
        got[method] = json.loads(r.stdout)
    assert got["auto"]["method"] == "arms" and "cores" in got["auto"]
    table = count_shard(inst, 2, 2, 3, 0, 1).corolles
    assert got["auto"]["corolles"] == got["arms"]["corolles"] == table
    assert got["factorised"]["corolles"] == table > 0


# -- parameter types ----------------------------------------------------------------------
def test_param_types():
    assert opts.CELL.convert("2,1", None, None) == (2, 1)
    assert opts.CELL.convert(" 3 , 0 ", None, None) == (3, 0)
    assert opts.CELLS.convert("0,0 1,1;2,2", None, None) == ((0, 0), (1, 1), (2, 2))
    assert opts.CELLS_OR_ALL.convert("ALL", None, None) == "all"
    assert opts.flatten_cells((((0, 0),), ((1, 2), (3, 4)))) == [(0, 0), (1, 2), (3, 4)]
    assert opts.flatten_cells((((0, 0),), "all")) is None
    assert opts.SHARD.convert("3/4", None, None) == (3, 4)
    assert opts.SIZE.convert("7", None, None) == (7, 7)
    assert opts.SIZE.convert("12x6", None, None) == (12, 6)
    bad = [(opts.CELL, "2;1"), (opts.CELL, "all"), (opts.CELLS, "all"), (opts.CELLS, "1,x"),
           (opts.SHARD, "4/4"), (opts.SHARD, "1/0"), (opts.SHARD, "0-4"),
           (opts.ShardType(8), "0/9"), (opts.SIZE, "7x"), (opts.SIZE, "0x3")]
    for t, text in bad:
        with pytest.raises(click.BadParameter):
            t.convert(text, None, None)


def test_bad_values_name_the_option(small):
    r = run("count", small, "--hamming", 1, "--at", "1;x")
    assert r.exit_code == 2 and "'--at'" in r.stderr and "bad cell" in r.stderr
    r = run("zones", "--size", "7x", "--hamming", 1)
    assert r.exit_code == 2 and "'--size'" in r.stderr
    r = run("stage", "count-shard", small, "--hamming", 2, "--at", "1,1", "--shard", "2/2",
            "--records", "r")
    assert r.exit_code == 2 and "'--shard'" in r.stderr and "0 <= K < S" in r.stderr


# -- every default declared once, in a light module ---------------------------------------
# each stage's parameters and defaults, declared once where the options read them
DEFAULTS_MODULES = ("e2store.store.defaults", "e2store.corolles.defaults",
                    "e2store.query.defaults", "e2store.solver.defaults",
                    "e2store.web.defaults", "e2store.solver.best.schedules")
KERNEL_LIBRARIES = ("numba", "llvmlite", "pyarrow", "duckdb", "matplotlib")


def _loaded_after(code: str) -> list[str]:
    """The kernel libraries a fresh interpreter has loaded after running `code`."""
    script = f"import sys\n{code}\nprint([m for m in {KERNEL_LIBRARIES!r} if m in sys.modules])\n"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return ast.literal_eval(p.stdout.splitlines()[-1])


def test_options_and_the_defaults_modules_load_no_kernel_library():
    """The options read the library's defaults from light modules: importing them loads
    no numba, llvmlite, pyarrow, duckdb or matplotlib (`--help` stays fast, and works
    without the optional extras)."""
    assert _loaded_after(f"import e2store.cli.options, {', '.join(DEFAULTS_MODULES)}") == []


@pytest.mark.parametrize("args", [["--help"], ["solve", "--help"], ["enumerate", "--help"],
                                  ["stage", "plan", "--help"], ["serve", "--help"],
                                  ["sql", "--help"], ["counts", "--help"]])
def test_help_loads_no_kernel_library(args):
    code = ("from click.testing import CliRunner\n"
            "from e2store.cli.main import main\n"
            f"r = CliRunner().invoke(main, {args!r})\n"
            "assert r.exit_code == 0 and '--help' in r.output, r.output")
    assert _loaded_after(code) == []


@pytest.mark.parametrize("module, names, defaults", [
    ("e2store.store.layout", ("FORMS", "RAW_FORMS"), "e2store.store.defaults"),
    ("e2store.store.stages", ("MAX_SHARDS",), "e2store.store.defaults"),
    ("e2store.corolles.sampling", ("DEFAULT_SAMPLES", "DEFAULT_TAIL"),
     "e2store.corolles.defaults"),
    ("e2store.solver.search", ("DEFAULT_MAX_STORED", "KERNELS", "AUTO_MIN_DEPTHS"),
     "e2store.solver.defaults"),
    ("e2store.solver.scan", ("SCAN_ORDERS",), "e2store.solver.defaults"),
    ("e2store.query.finals", ("DEFAULT_FINALS_HAMMING",), "e2store.query.defaults"),
    ("e2store.query.limits", ("DEFAULT_MEMORY_LIMIT",), "e2store.query.defaults"),
    ("e2store.cli.options", ("FORMS", "RAW_FORMS", "MAX_SHARDS", "DEFAULT_SAMPLES",
                             "SCAN_ORDERS", "KERNELS", "DEFAULT_FINALS_HAMMING"), None),
])
def test_the_defaults_keep_their_old_homes(module, names, defaults):
    """Each default is one object, still importable from where it was declared before."""
    import importlib

    mod = importlib.import_module(module)
    for name in names:
        homes = [defaults] if defaults else [m for m in DEFAULTS_MODULES
                                             if hasattr(importlib.import_module(m), name)]
        assert len(homes) == 1, (name, homes)
        assert getattr(mod, name) is getattr(importlib.import_module(homes[0]), name)


def test_scan_help_lists_every_scan_order():
    """`solve --scan`'s help lists every order the library takes, Blackwood's (`solve
    --best`'s default) included, and each is a working order."""
    from e2store.cli import main
    from e2store.solver.defaults import SCAN_ORDERS
    from e2store.solver.scan import scan_order

    assert SCAN_ORDERS[-1] == "blackwood"
    text = " ".join(CliRunner().invoke(main, ["solve", "--help"]).output.split())
    assert f"Scan order: {', '.join(SCAN_ORDERS)}, or a file" in text
    for name in SCAN_ORDERS:
        assert scan_order(name, 4, 3).shape == (12, 2)


# -- deprecated spellings -----------------------------------------------------------------
def _notes(r) -> list[str]:
    return [ln for ln in r.stderr.splitlines() if ln.startswith("e2store: note: ")]


def test_deprecated_store_steps(small, tmp_path):
    st, plan = tmp_path / "st", tmp_path / "plan.json"
    r = run("plan", small, "--hamming", 1, "--json", plan)
    assert r.exit_code == 0, r.output
    assert json.loads(plan.read_text())["hamming"] == 1
    assert "`e2store plan` is deprecated: use `e2store stage plan`" in r.stderr
    assert any("--json FILE is deprecated" in n for n in _notes(r))
    receipt = tmp_path / "r.json"
    r = run("shard", small, "--out", st, "--hamming", 1, "--zone", 0, "--shard", "0/1",
            "--json", receipt)
    assert r.exit_code == 0, r.output
    assert json.loads(receipt.read_text())["rows"] > 0 and len(_notes(r)) == 3
    r = run("stage", "rotate", small, "--store", st, "--hamming", 1, "--zone", 0, "--form",
            "flat", "--json")
    assert r.exit_code == 0 and not _notes(r)
    assert all(p["form"] == "flat" for p in json.loads(r.stdout))


def test_deprecated_store_spellings(small, tmp_path):
    st = tmp_path / "st"
    r = run("enumerate", small, "--hamming", 1, "--zones", "0,0", "--out", st)
    assert r.exit_code == 0, r.output
    assert {p["zone"] for p in store.read_manifest(st)["partitions"]} == {0}
    assert len(_notes(r)) == 2
    r = run("sql", st, "SELECT count(*) AS n FROM manifest", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["n"] > 0 and len(_notes(r)) == 1
    js = tmp_path / "s.json"
    r = run("summary", st, "--json", js)
    assert r.exit_code == 0, r.output
    assert json.loads(js.read_text())["entries"] and len(_notes(r)) == 2
    r = run("summary", "--json", "--store", st)
    assert r.exit_code == 0 and json.loads(r.stdout)["entries"] and not _notes(r)
    r = run("tables", st, "--out-dir", tmp_path / "t")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t" / "corolles_h1.csv").exists() and len(_notes(r)) == 2


def test_deprecated_count_spellings(small, tmp_path):
    r = run("count", small, "--hamming", 1, "--zones", "--json")
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 4, r.output
    assert "--zones is deprecated: it is the default now" in r.stderr
    rec = tmp_path / "rec"
    r = run("counts", small, "--hamming", 1, "--out", rec, "--tables", tmp_path / "t", "--json")
    assert r.exit_code == 0, r.output
    assert len(r.stdout.splitlines()) == 4 and len(_notes(r)) == 3
    r = run("count-tables", small, "--hamming", 1, "--out", rec, "--require", "-o",
            tmp_path / "t2")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t2" / "corolles_h1.md").read_text() == \
        (tmp_path / "t" / "corolles_h1.md").read_text()


def test_deprecated_solve_merge_prints_json(tmp_path):
    report = {"instance": "a", "scan": "rowscan", "symmetry_break": True, "first_only": False,
              "complete": True, "shard": [0, 1], "openings": 1, "solutions": 2, "nodes": 3,
              "seconds": 1.0, "stored": 0, "width": 4, "height": 4, "workers": 1,
              "per_worker": [], "openings_with_solutions": 1}
    p = tmp_path / "s0.json"
    p.write_text(json.dumps(report))
    r = run("solve-merge", p)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["solutions"] == 2 and len(_notes(r)) == 1
    r = run("solve-merge", p, "--out", tmp_path / "m.json")
    assert r.exit_code == 0 and json.loads((tmp_path / "m.json").read_text())["solutions"] == 2


# -- start-up -----------------------------------------------------------------------------
HEAVY = ("numba", "pyarrow", "duckdb", "matplotlib")


@pytest.mark.parametrize("args", [["--help"], ["validate", "{f}"], ["stats", "{f}"],
                                  ["zones", "--size", "7", "--hamming", "2"],
                                  ["stage", "--help"], ["count", "--help"]])
def test_light_commands_import_no_heavy_library(small, args):
    code = (
        "import sys\n"
        "from e2store.cli import main\n"
        "try:\n"
        f"    main({[a.format(f=small) for a in args]!r}, standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules])\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "HEAVY []", p.stdout


# -- the generated reference --------------------------------------------------------------
def test_docs_cli_md_is_up_to_date():
    assert DOCS.read_text() == render(), \
        "docs/cli.md is out of date: run `python -m e2store.cli.reference > docs/cli.md`"


@pytest.mark.parametrize("exc, want", [
    (OSError(28, "No space left on device"),
     "e2store: error: No space left on device (free some space and run the command again: "
     "finished work is kept)\n"),
    (FileNotFoundError(2, "No such file or directory"),  # no file name (pyarrow's way)
     "e2store: error: No such file or directory\n"),
    (PermissionError(13, "Permission denied", "/x/y"), "e2store: error: /x/y: Permission denied\n"),
    (OSError("a device error"), "e2store: error: a device error\n"),
    (MemoryError(), "e2store: error: out of memory (lower --threads, --workers or "
     "--memory-budget, or use a machine with more memory)\n"),
])
def test_system_errors_are_one_line(small, monkeypatch, exc, want):
    """A full disk, a file gone without a name, no memory: one line, exit 2, no traceback
    (never `error: None: ...`)."""
    import e2store.instance.formats as formats

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(formats, "read_instance", fail)
    r = CliRunner().invoke(main, ["stats", str(small)])
    assert r.exit_code == 2 and r.stderr == want and "None" not in r.stderr

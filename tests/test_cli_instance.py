"""`e2store validate`, `generate-instance` and `stats`: output, exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from e2store.cli import main
from e2store.cli.options import load_instance, parse_size
from e2store.errors import InstanceError, InstanceFormatError
from e2store.instance.formats import read_instance
from e2store.instance.stats import instance_stats


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result, code: int = 2) -> str:
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("e2store: error: "), result.stderr
    return lines[0]


def test_validate_clean_benchmark(shared_instances):
    r = run("validate", shared_instances / "benchmark" / "pieces_4x4.txt")
    assert r.exit_code == 0, r.output
    assert "format:  benchmark (sides W N E S)" in r.stdout
    assert "size:    4x4, 16 pieces" in r.stdout
    assert "4 corner, 8 border, 4 interior" in r.stdout
    assert "result:  ok" in r.stdout


def test_validate_clue_reports_duplicates_exit_0(shared_instances):
    r = run("validate", shared_instances / "clue1_jwortmann.txt")
    assert r.exit_code == 0
    assert "format:  jwortmann (sides S W N E)" in r.stdout
    assert r.stdout.count("info: identical pieces") == 7


def test_validate_options(shared_instances):
    path = shared_instances / "clue2_jwortmann.txt"
    r = run("validate", path, "--size", "6x12")
    assert r.exit_code == 0 and "size:    6x12" in r.stdout
    r = run("validate", path, "--format", "jwortmann", "--sides", "S W N E")
    assert r.exit_code == 0 and "12x6" in r.stdout
    # a mirroring side order puts grey on opposite sides of some corners: an error, exit 2
    line = one_line_error(run("validate", path, "--sides", "WENS"))
    assert str(path) in line
    r = run("validate", path, "--sides", "WNEX")
    assert r.exit_code == 2 and "Traceback" not in r.output
    r = run("validate", path, "--size", "banana")
    assert r.exit_code == 2


def test_validate_warning_exit_1(shared_instances, tmp_path):
    lines = (shared_instances / "benchmark" / "pieces_4x4.txt").read_text().splitlines()
    lines[16] = "3 3 5 4"  # interior (3 3 5 5): colours 4 and 5 now appear an odd number of times
    path = tmp_path / "odd.txt"
    path.write_text("\n".join(lines) + "\n")
    r = run("validate", path)
    assert r.exit_code == 1
    assert r.stdout.count("warning: colour") == 2 and "cannot be solved" in r.stdout


@pytest.mark.parametrize(
    "text, line",
    [("4\n5\n1\n1 1 1 1\n0 0 1 1\n0 0 1\n", 6),  # a short line
     ("2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n", 1),  # one piece short of 2x2
     ("2 2\n0 0 1 1\n1 0 0 1\n0 1 0 1\n1 1 0 0\n", 4),  # grey on opposite sides (check)
     ("", 1)],
)
def test_validate_errors_one_line_exit_2(tmp_path, text, line):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    msg = one_line_error(run("validate", path))
    assert f"{path}:{line}: " in msg
    assert run("stats", path).exit_code == 2


def test_validate_missing_file():
    msg = one_line_error(run("validate", "/no/such/file.txt"))
    assert "/no/such/file.txt" in msg


def test_generate_instance_writes_valid_canonical_file(tmp_path):
    out = tmp_path / "g7.e2s"
    r = run("generate-instance", "--size", 7, "--frame-colours", 3, "--inner-colours", 5,
            "--seed", 1, "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.startswith("e2store-instance 1\n") and "\nname: g7\n" in text
    inst = load_instance(out)
    assert inst.name == "g7" and (inst.width, inst.height) == (7, 7)
    assert inst.solution is not None
    r = run("validate", out)
    assert r.exit_code == 0 and "solution: valid" in r.stdout
    again = tmp_path / "again.e2s"
    run("generate-instance", "--size", 7, "--frame-colours", 3, "--inner-colours", 5,
        "--seed", 1, "-o", again, "--name", "g7")
    assert again.read_bytes() == out.read_bytes()  # deterministic
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.e2s", "g7.e2s"]


def test_generate_rectangular(tmp_path):
    out = tmp_path / "r.e2s"
    r = run("generate-instance", "--size", 12, "--height", 6, "--frame-colours", 4,
            "--inner-colours", 4, "--seed", 3, "-o", out, "--name", "rect")
    assert r.exit_code == 0, r.output
    inst = read_instance(out)
    assert (inst.name, inst.width, inst.height) == ("rect", 12, 6)
    r2 = run("generate-instance", "--size", "12x6", "--frame-colours", 4,
             "--inner-colours", 4, "--seed", 3, "-o", tmp_path / "r2.e2s", "--name", "rect")
    assert r2.exit_code == 0 and (tmp_path / "r2.e2s").read_bytes() == out.read_bytes()


@pytest.mark.parametrize(
    "args",
    [["--size", 1, "--frame-colours", 2, "--inner-colours", 2, "--seed", 0],
     ["--size", 6, "--frame-colours", 0, "--inner-colours", 2, "--seed", 0],
     ["--size", 6, "--frame-colours", 2, "--inner-colours", 0, "--seed", 0],
     ["--size", 6, "--height", 1, "--frame-colours", 2, "--inner-colours", 2, "--seed", 0],
     ["--size", 6, "--frame-colours", 2, "--inner-colours", 2, "--seed", -1]],
)
def test_generate_bad_parameters_write_nothing(tmp_path, args):
    out = tmp_path / "x.e2s"
    r = run("generate-instance", *args, "-o", out)
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []


def test_stats_text_and_json(shared_instances):
    path = shared_instances / "benchmark" / "pieces_4x4.txt"
    r = run("stats", path)
    assert r.exit_code == 0 and "links         90" in r.stdout
    r = run("stats", path, "--json")
    assert r.exit_code == 0
    st = json.loads(r.stdout)
    assert st["links"] == 90 and st["corners"] == 4
    assert st == json.loads(json.dumps(instance_stats(read_instance(path))))
    r = run("stats", shared_instances / "clue2_jwortmann.txt", "--json", "--size", "6x12")
    assert json.loads(r.stdout)["width"] == 6


def test_load_instance_and_parse_size(shared_instances, tmp_path):
    inst = load_instance(shared_instances / "brendan_set1" / "pieces_05x05.txt")
    assert inst.width == 5
    bad = tmp_path / "b.txt"
    bad.write_text("2 2\n0 0 1 1\n1 0 0 1\n0 1 1 0\n0 0 0 1\n")
    with pytest.raises(InstanceError, match=":5: piece 3"):
        load_instance(bad)
    with pytest.raises(InstanceFormatError):
        load_instance(bad, fmt="benchmark")
    assert parse_size("7") == (7, 7) and parse_size("12x6") == (12, 6)
    with pytest.raises(ValueError):
        parse_size("7x")


def test_real_process_one_line_no_traceback(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("0 0 1 1\n1 0 0 1\n0 1 x 0\n1 1 0 0\n")
    p = subprocess.run([sys.executable, "-m", "e2store", "validate", str(bad)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"e2store: error: {bad}:3: not an integer: 'x' (expected 4 integers)\n"


def test_generated_solution_is_consistent(tmp_path):
    out = tmp_path / "s.e2s"
    run("generate-instance", "--size", 5, "--frame-colours", 2, "--inner-colours", 4,
        "--seed", 9, "-o", out)
    inst = read_instance(out)
    table = inst.rotated_table()[inst.solution]  # (H, W, 4) colours shown on W N E S
    assert np.array_equal(table[:, 1:, 0], table[:, :-1, 2])
    assert np.array_equal(table[1:, :, 1], table[:-1, :, 3])

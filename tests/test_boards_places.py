"""A dataset's file says where it belongs, and its runs do not overlap (issue 57, item 7):
a part moved into another arm's directory is refused by every reader; a renamed part
stops a resumed run; an unsharded run and a shard of the same seed, or shards of two
counts, are never both running; a version of 5,000 digits is one line, not a traceback."""

from __future__ import annotations

import shutil

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from naive_best import unsolvable_pieces

from e2store.boards.dataset import boards_sink, dataset_parts, read_boards_dataset
from e2store.boards.table import read_boards
from e2store.cli import main
from e2store.errors import DamagedDataError, SolverError
from e2store.files import BusyError
from e2store.instance.e2sfile import write_e2store
from e2store.instance.formats import read_instance
from e2store.instance.model import Instance
from e2store.solver.best import solve_best

RUN = {"breaks": "20,24,28,30,32", "restart_nodes": 20000, "finish": False}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("places")
    write_e2store(Instance("u", 6, 6, unsolvable_pieces(6, 6, 3)), tmp / "u.e2s")
    inst = read_instance(tmp / "u.e2s")
    for arm in ("a", "b"):
        solve_best(inst, output=tmp / "d", arm=arm, restarts=3, **RUN)
    return inst, tmp


def test_parts_say_their_arm(made):
    inst, tmp = made
    for p in dataset_parts(tmp / "d"):
        assert pq.read_schema(p.path).metadata[b"arm"] == p.arm.encode()


def test_a_part_moved_to_another_arm_is_refused_by_every_reader(made, tmp_path):
    inst, tmp = made
    shutil.copytree(tmp / "d", tmp_path / "d")
    src = tmp_path / "d" / "arm=a" / "part-s0-r000000002.parquet"
    src.rename(tmp_path / "d" / "arm=b" / "part-s0-r000000005.parquet")
    moved = tmp_path / "d" / "arm=b" / "part-s0-r000000005.parquet"
    with pytest.raises((SolverError, DamagedDataError), match="arm 'a'"):
        read_boards_dataset(tmp_path / "d", inst)
    e2s, d = tmp / "u.e2s", tmp_path / "d"
    for args in (("score", e2s, d), ("summary", "--boards", d),
                 ("sql", "--boards", d, "SELECT count(*) FROM boards"),
                 ("save-boards", e2s, d, "-o", tmp_path / "saved"),
                 ("compact-boards", d, "--min-parts", 1)):
        r = cli(*args)
        assert r.exit_code == 2, (args, r.output)
        assert "arm 'a'" in r.output and "moved" in r.output, (args, r.output)
    # written back to its own arm under its own name, it is read again
    moved.rename(src)
    assert len(read_boards_dataset(tmp_path / "d", inst).parts) == 6


def test_a_renamed_part_stops_a_resumed_run(made, tmp_path):
    inst, tmp = made
    shutil.copytree(tmp / "d", tmp_path / "d")
    arm = tmp_path / "d" / "arm=a"
    (arm / "part-s0-r000000002.parquet").rename(arm / "part-s0-r000000502.parquet")
    with pytest.raises(DamagedDataError, match="a part renamed"):
        solve_best(inst, output=tmp_path / "d", arm="a", restarts=4, **RUN)
    assert not (arm / "part-s0-r000000003.parquet").exists()  # nothing run


def test_an_unsharded_run_and_shards_of_the_seed_exclude_each_other(made, tmp_path):
    inst, _ = made
    out = tmp_path / "ds"
    with boards_sink(out, inst, 3):
        for shard in ((0, 2), (1, 3)):
            with pytest.raises(BusyError, match="an unsharded run of seed 3 is running"):
                with boards_sink(out, inst, 3, shard=shard):
                    pass
        with boards_sink(out, inst, 4, shard=(0, 2)):
            pass  # another seed
    with boards_sink(out, inst, 3, shard=(0, 2)), boards_sink(out, inst, 3, shard=(1, 2)):
        with pytest.raises(BusyError, match="shard [01] of 2 of seed 3 is running"):
            with boards_sink(out, inst, 3, shard=(0, 3)):
                pass
        with pytest.raises(BusyError, match="shard [01] of 2 of seed 3 is running"):
            with boards_sink(out, inst, 3):
                pass
    with boards_sink(out, inst, 3, shard=(0, 3)):  # the others ended: free again
        pass


@pytest.mark.parametrize("version", ["9" * 5000, "-3", "3.0", "٣"])
def test_a_version_that_is_no_number_is_one_line(made, tmp_path, version):
    inst, tmp = made
    part = dataset_parts(tmp / "d")[0].path
    t = pq.read_table(part)
    meta = {**t.schema.metadata, b"version": version.encode()}
    bad = tmp_path / "b.parquet"
    pq.write_table(t.replace_schema_metadata(meta), bad)
    with pytest.raises(SolverError, match="version") as e:
        read_boards(bad, inst)
    assert len(str(e.value).splitlines()) == 1 and len(str(e.value)) < 400
    r = cli("score", tmp / "u.e2s", bad)
    assert r.exit_code == 2 and "Traceback" not in r.output and r.output.count("\n") == 1
    d = tmp_path / "d" / "arm=a"
    d.mkdir(parents=True)
    shutil.copy(bad, d / "part-s0-r000000000.parquet")
    with pytest.raises(SolverError, match="version"):
        read_boards_dataset(tmp_path / "d", inst)

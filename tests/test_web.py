"""`e2store serve` (issue 25, first part): every page and API answer of the web explorer
on a small store, checked against the store's own figures, and bad input answered with a
clear 4xx, the server still answering after it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install '.[web]')")
pytest.importorskip("fastapi.testclient", reason="httpx (FastAPI's test client) is missing")

from click.testing import CliRunner  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from helpers import random_instance  # noqa: E402

from e2store import store  # noqa: E402
from e2store.cli import main  # noqa: E402
from e2store.web.app import create_app  # noqa: E402
from e2store.zones.zonemap import zone_map  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("web") / "store"
    inst = random_instance(5, 4, 3)
    store.enumerate_store(root, inst, 1, None, forms=("flat", "cartesian"))
    store.enumerate_store(root, inst, 2, [0, 1])
    results = root.parent / "results"
    (results / "tables").mkdir(parents=True)
    (results / "tables" / "corolles_h1.csv").write_text("x,y,5x4\n0,0,12\n1,0,34\n")
    (results / "plots").mkdir()
    (results / "plots" / "corolles.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(20))
    (results / "summary.json").write_text('{"checksum": "abc"}')
    (results / ".snakemake").mkdir()
    (results / ".snakemake" / "hidden.csv").write_text("a\n1\n")
    (results / "notes.bin").write_bytes(b"x")
    (root.parent / "secret.csv").write_text("s\n1\n")
    (results / "link.csv").symlink_to(root.parent / "secret.csv")
    with TestClient(create_app(root, results=results, sql_seconds=2.0)) as client:
        yield client, root, inst


def test_overview_is_the_summary(served):
    client, root, inst = served
    got = client.get("/api/summary").json()
    want = store.read_manifest(root)
    assert got["checksum"] == want["checksum"] and got["format_version"] == store.FORMAT_VERSION
    assert [i["id"] for i in got["instances"]] == [inst.id]
    assert got["instances"][0]["hammings"] == [1, 2]
    flat1 = sum(p["corolles"] for p in want["partitions"]
                if p["form"] == "flat" and p["hamming"] == 1 and p["rotation"] == 0)
    assert any(e["hamming"] == 1 and e["form"] == "flat" and e["corolles"] == flat1
               for e in got["entries"])
    page = client.get("/")
    assert page.status_code == 200 and inst.id in page.text and want["checksum"] in page.text


def test_instance_and_cell_pages(served):
    client, root, inst = served
    got = client.get(f"/api/instances/{inst.id}", params={"hamming": 1}).json()
    zm = zone_map(5, 4, 1)
    assert got["hamming"] == 1 and got["hammings"] == [1, 2]
    assert [z["canonical"] for z in got["zones"]] == [[z.x, z.y] for z in zm.zones]
    assert [z["corolles"] for z in got["zones"]] == [
        store.read_record(root, inst.id, 1, z.id, 0, "flat")["corolles"] for z in zm.zones]
    h2 = client.get(f"/api/instances/{inst.id}", params={"hamming": 2}).json()["zones"]
    assert [z["corolles"] is None for z in h2] == [z["zone"] > 1 for z in h2]  # zones 0, 1
    page = client.get(f"/instances/{inst.id}", params={"hamming": 2})
    assert page.status_code == 200 and 'id="zone-4-3"' in page.text  # the clickable map
    assert 'id="stats"' in page.text and got["stats"]["pieces"] == 20
    for x, y in [(0, 0), (2, 1), (4, 3)]:
        cell = client.get(f"/api/instances/{inst.id}/cells/{x}/{y}").json()
        for row in cell["hammings"]:
            zm = zone_map(5, 4, row["hamming"])
            assert row["zone"] == zm.zone_at(x, y).id
            assert row["rotation"] == zm.rotation_at(x, y)
            for form, v in row["forms"].items():
                rec = store.read_record(root, inst.id, row["hamming"], row["zone"],
                                        row["rotation"], form)
                assert v["corolles"] == rec["corolles"] and v["rows"] == rec["rows"]
        h1 = next(r for r in cell["hammings"] if r["hamming"] == 1)
        cells, _ = store.read_partition(root, inst.id, 1, h1["zone"], h1["rotation"])
        assert h1["forms"]["flat"]["rows"] == len(cells)
        assert client.get(f"/instances/{inst.id}/cells/{x}/{y}").status_code == 200


def test_corolle_browser_pages_and_filters(served):
    """Pages of a cell's corolles equal its partition's rows in stored order, filtered by
    numpy (placement at a slot, pieces left out); the totals and the per-slot heat map's
    values are the partition's."""
    client, root, inst = served
    zm = zone_map(5, 4, 2)
    x, y = next((m.x, m.y) for m in zm.zones[1].members if m.rotation)  # h2: zones 0, 1
    zone, rot = zm.zone_at(x, y).id, zm.rotation_at(x, y)
    rows, _ = store.read_partition(root, inst.id, 2, zone, rot)
    url = f"/api/instances/{inst.id}/cells/{x}/{y}/corolles"
    got = client.get(url, params={"hamming": 2, "offset": 3, "size": 5}).json()
    assert got["total"] == len(rows) and got["corolles"] == rows[3:8].tolist()
    assert got["cardinality"] == [len(np.unique(c[c >= 0] >> 2)) for c in rows.T]
    slot, placement = 1, int(rows[len(rows) // 2, 1])
    without = sorted({int(v) >> 2 for v in rows[0, 5:8] if v >= 0} - {placement >> 2})
    keep = (rows[:, slot] == placement) & ~np.isin(np.where(rows >= 0, rows >> 2, -1),
                                                   without).any(axis=1)
    got = client.get(url, params={"hamming": 2, "size": 100, "slot": slot,
                                  "placement": placement,
                                  "without": ",".join(map(str, without))}).json()
    assert got["total"] == int(keep.sum()) > 0
    assert got["corolles"] == rows[keep][:100].tolist()
    again = client.get(url, params={"hamming": 2, "size": 2, "offset": 1, "slot": slot,
                                    "placement": placement,
                                    "without": ",".join(map(str, without))}).json()
    assert again["total"] == got["total"]  # kept from the first scan
    assert again["corolles"] == rows[keep][1:3].tolist()
    last = client.get(url, params={"hamming": 2, "offset": len(rows) - 1}).json()
    assert last["corolles"] == rows[-1:].tolist()  # the last row group, read alone
    page = client.get(f"/instances/{inst.id}/cells/{x}/{y}/corolles",
                      params={"hamming": 2, "offset": 0, "slot": "", "placement": ""})
    assert page.status_code == 200 and page.text.count('class="svg corolle"') == min(
        12, len(rows)) and 'id="heat-0"' in page.text and 'id="next"' in page.text


def test_tables_and_plots_are_the_stores(served):
    from e2store.reports.tables import MISSING, load_tables

    client, root, _ = served
    got = client.get("/api/tables").json()
    want = load_tables(root)
    assert [(t["metric"], t["hamming"]) for t in got["tables"]] == [
        (t.metric, t.hamming) for t in want]
    for g, w in zip(got["tables"], want, strict=True):
        assert [[r["x"], r["y"]] for r in g["rows"]] == [list(c) for c in w.cells]
        assert [r["values"] for r in g["rows"]] == [
            ["missing" if v is MISSING else v for v in row] for row in w.values]
    page = client.get("/tables")
    assert page.status_code == 200 and 'id="plot-corolles"' in page.text
    assert "<svg" in page.text and 'id="corolles_h2"' in page.text


def test_results_directory_is_shown_and_confined(served):
    client, _, _ = served
    got = client.get("/api/results").json()
    paths = {f["path"]: f for f in got["files"]}
    assert set(paths) == {"tables/corolles_h1.csv", "plots/corolles.png", "summary.json"}
    assert paths["tables/corolles_h1.csv"]["rows"] == [["0", "0", "12"], ["1", "0", "34"]]
    assert client.get("/results/files/plots/corolles.png").content.startswith(b"\x89PNG")
    assert client.get("/results/files/summary.json").json() == {"checksum": "abc"}
    page = client.get("/results")
    assert page.status_code == 200 and 'src="/results/files/plots/corolles.png"' in page.text
    for bad in ("..%2Fsecret.csv", "link.csv", ".snakemake/hidden.csv", "notes.bin",
                "tables/none.csv"):
        r = client.get(f"/results/files/{bad}")
        assert r.status_code == 404, bad


def test_no_results_directory_is_a_clear_404(served, tmp_path):
    _, root, _ = served
    with TestClient(create_app(root)) as client:
        r = client.get("/api/results")
        assert r.status_code == 404 and "--results DIR" in r.json()["error"]
        assert "/results" not in client.get("/").text.split("</nav>")[0]


def test_sql_box_runs_one_select_within_limits(served):
    client, root, inst = served
    q = "SELECT zone, count(*) AS n FROM corolles WHERE hamming = 1 GROUP BY zone ORDER BY zone"
    got = client.get("/api/sql", params={"q": q}).json()
    want = {}
    for p in store.read_manifest(root)["partitions"]:
        if p["form"] == "flat" and p["hamming"] == 1:
            want[p["zone"]] = want.get(p["zone"], 0) + p["rows"]
    assert got["columns"] == ["zone", "n"] and got["rows"] == [[z, n] for z, n in sorted(
        want.items())]
    capped = client.get("/api/sql", params={"q": "SELECT * FROM corolles", "limit": 7}).json()
    assert len(capped["rows"]) == 7 and capped["truncated"]
    page = client.get("/sql", params={"q": q})
    assert page.status_code == 200 and 'id="result"' in page.text
    assert client.get("/sql").status_code == 200


@pytest.mark.parametrize("path, params, status, words", [
    ("/api/instances/nope", {}, 404, "no instance 'nope'"),
    ("/instances/nope", {}, 404, "no instance"),
    ("/api/instances/{iid}/cells/9/9", {}, 400, "off the 5x4 board"),
    ("/api/instances/{iid}/cells/x/1", {}, 400, "bad request"),
    ("/api/instances/{iid}", {"hamming": -1}, 400, "hamming -1"),
    ("/api/sql", {"q": "COPY (SELECT 1) TO '/tmp/x.csv'"}, 400, "not COPY"),
    ("/api/sql", {"q": "SELECT 1; SELECT 2"}, 400, "one read-only SELECT"),
    ("/api/sql", {"q": "CREATE TABLE t AS SELECT 1"}, 400, "not CREATE"),
    ("/api/sql", {"q": "SELECT * FROM read_csv('/etc/passwd')"}, 400, "query failed"),
    ("/api/sql", {"q": "SELEC 1"}, 400, "parse"),
    ("/api/sql", {"q": "SELECT 1", "limit": 0}, 400, "limit"),
    ("/nowhere", {}, 404, "no such page"),
    ("/api/instances/{iid}/cells/1/1/corolles", {"hamming": 3}, 404, "no partition"),
    ("/api/instances/{iid}/cells/1/1/corolles", {"slot": 2}, 400, "both slot and placement"),
    ("/api/instances/{iid}/cells/1/1/corolles", {"slot": 99, "placement": 0}, 400,
     "slot 99 does not exist"),
    ("/api/instances/{iid}/cells/1/1/corolles", {"without": "3,x"}, 400, "not a piece"),
    ("/api/instances/{iid}/cells/1/1/corolles", {"without": "999"}, 400, "not all pieces"),
    ("/api/instances/{iid}/cells/1/1/corolles", {"size": 1000}, 400, "size 1000"),
])
def test_bad_input_is_a_clear_4xx(served, path, params, status, words):
    client, _, inst = served
    r = client.get(path.format(iid=inst.id), params=params)
    assert r.status_code == status, r.text
    assert words in r.text
    assert "Traceback" not in r.text
    if path.startswith("/api/"):
        assert r.json()["status"] == status
    assert client.get("/api/summary").status_code == 200  # still serving


def test_a_slow_query_is_stopped(served):
    client, _, _ = served
    slow = ("SELECT count(*) FROM range(100000000) a, range(100000000) b "
            "WHERE a.range * 7 = b.range * 3")
    r = client.get("/api/sql", params={"q": slow})
    assert r.status_code == 400 and "time limit of 2 s" in r.json()["error"]
    assert client.get("/api/sql", params={"q": "SELECT 42 AS x"}).json()["rows"] == [[42]]


def test_concurrent_requests_each_get_their_answer(served):
    client, _, inst = served
    out: list = []

    def ask(k: int) -> None:
        r = client.get("/api/sql", params={"q": f"SELECT {k} AS k"})
        out.append((k, r.json()["rows"]))

    threads = [threading.Thread(target=ask, args=(k,)) for k in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == [(k, [[k]]) for k in range(24)]


def test_serve_refuses_what_is_no_store(tmp_path):
    r = CliRunner().invoke(main, ["serve", "--store", str(tmp_path / "none")])
    assert r.exit_code == 2 and "manifest" in r.output


def test_serve_listens_locally_unless_told(served, monkeypatch):
    """`e2store serve` hands the app to uvicorn on 127.0.0.1:8765 by default, and warns when
    another address serves the store to the network."""
    import uvicorn

    _, root, _ = served
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    r = CliRunner().invoke(main, ["serve", "--store", str(root)])
    assert r.exit_code == 0 and "warning" not in r.output
    assert calls[-1]["host"] == "127.0.0.1" and calls[-1]["port"] == 8765
    r = CliRunner().invoke(main, ["serve", "--store", str(root), "--host", "0.0.0.0",
                                  "--port", "9001"])
    assert r.exit_code == 0 and "warning: listening on 0.0.0.0" in r.output
    assert calls[-1]["host"] == "0.0.0.0" and calls[-1]["port"] == 9001


def test_count_tables_of_a_records_directory(served, tmp_path):
    """`--records DIR`: the exact count tables of `tabulate`'s records, equal to the store's
    corolles per zone; an instance the store does not hold is skipped, named."""
    from e2store.instance.e2sfile import write_e2store

    _, root, inst = served
    src = tmp_path / "i.e2s"
    write_e2store(inst, src)
    records = tmp_path / "records"
    r = CliRunner().invoke(main, ["tabulate", str(src), "--hamming", "1", "--records",
                                  str(records)])
    assert r.exit_code == 0, r.output
    (records / "other-0123456789ab" / "h1").mkdir(parents=True)
    with TestClient(create_app(root, records=records)) as client:
        got = client.get("/api/counts").json()
        page = client.get("/counts")
    assert got["skipped"] == ["other-0123456789ab"]
    table = next(t for t in got["tables"] if t["metric"] == "corolles" and t["hamming"] == 1)
    want = {(z.x, z.y): store.read_record(root, inst.id, 1, z.id, 0, "flat")["corolles"]
            for z in zone_map(5, 4, 1).zones}
    assert {(r["x"], r["y"]): r["values"][0] for r in table["rows"]} == want
    assert page.status_code == 200 and 'id="plot-corolles"' in page.text
    assert "other-0123456789ab" in page.text


def test_corolle_pages_across_files(tmp_path):
    """A partition cut into files of 37 rows: every window of the browser, plain and
    filtered, is the partition's rows read whole."""
    inst = random_instance(5, 4, 3)
    root = tmp_path / "store"
    store.enumerate_store(root, inst, 2, [1], rows_per_file=37)
    zone = zone_map(5, 4, 2).zones[1]
    rows, _ = store.read_partition(root, inst.id, 2, 1, 0)
    assert len(store.read_record(root, inst.id, 2, 1, 0, "flat")["files"]) > 3
    url = f"/api/instances/{inst.id}/cells/{zone.x}/{zone.y}/corolles"
    piece = int(rows[0, 0]) >> 2 if rows[0, 0] >= 0 else int(rows[0, 1]) >> 2
    kept = rows[~np.isin(np.where(rows >= 0, rows >> 2, -1), [piece]).any(axis=1)]
    with TestClient(create_app(root)) as client:
        for offset in range(0, len(rows) + 20, 17):
            got = client.get(url, params={"hamming": 2, "offset": offset, "size": 20}).json()
            assert got["corolles"] == rows[offset:offset + 20].tolist(), offset
            got = client.get(url, params={"hamming": 2, "offset": offset, "size": 20,
                                          "without": str(piece)}).json()
            assert got["total"] == len(kept)
            assert got["corolles"] == kept[offset:offset + 20].tolist(), offset

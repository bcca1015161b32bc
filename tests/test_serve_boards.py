"""`e2store serve --boards FILE` alone (issue 46): no store needed, a file that a run has
not written yet waited for and shown once it comes, every board linked to the viewer and
the best one a click away; and `/api/docs` that works offline (no external URL)."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install '.[web]')")
pytest.importorskip("fastapi.testclient", reason="httpx (FastAPI's test client) is missing")

from click.testing import CliRunner  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from helpers import random_instance  # noqa: E402

from e2store import store  # noqa: E402
from e2store.boards.table import make_boards, read_boards, recount, write_boards  # noqa: E402
from e2store.cli import main  # noqa: E402
from e2store.errors import MissingError  # noqa: E402
from e2store.instance.e2sfile import write_e2store  # noqa: E402
from e2store.instance.url import board_url  # noqa: E402
from e2store.web.app import create_app  # noqa: E402
from e2store.web.boards import best_row  # noqa: E402


@pytest.fixture
def game(tmp_path):
    """An instance, its piece file, and the boards of a boards file not yet written."""
    inst = random_instance(5, 5, 4)
    piece_file = tmp_path / "g.e2s"
    write_e2store(inst, piece_file)
    rng = np.random.default_rng(7)
    cells, rows = [], []
    for k in range(8):
        b = np.array([p * 4 + int(rng.integers(4)) for p in rng.permutation(25)])
        holes = 0 if k >= 6 else int(rng.integers(1, 5))
        b[rng.choice(25, holes, replace=False)] = -1
        rc = recount(inst, b[None])
        cells.append(b)
        rows.append({"depth": 25 - holes, "score": int(rc["matched"][0]), "joins": 40,
                     "mismatches": int(rc["mismatched"][0]), "holes": holes, "seed": 3,
                     "restart": k, "nodes": 100 * k, "seconds": 0.5 * k,
                     "source": "filled" if k >= 6 else "best"})
    return inst, piece_file, make_boards(25, cells, rows)


def links(text: str) -> list[str]:
    return [html.unescape(u) for u in re.findall(r'href="([^"]*)"', text)]


def test_serve_a_boards_file_without_a_store(game, tmp_path):
    inst, piece_file, boards = game
    out = tmp_path / "b.parquet"
    write_boards(out, inst, boards)
    with TestClient(create_app(None, boards=out, boards_instance=piece_file)) as client:
        d = client.get("/api/boards").json()
        b = read_boards(out, inst)
        assert d["boards"] == len(b) == 8 and not d["waiting"]
        assert sorted(r["url"] for r in d["rows"]) == sorted(
            board_url(inst, c.astype(np.int64)) for c in b.cells)
        best = best_row(b)
        assert d["best_row"]["row"] == best and b.stats["source"][best] == "filled"
        assert d["best_row"]["url"] == board_url(inst, b.cells[best].astype(np.int64))
        page = client.get("/boards")
        assert page.status_code == 200
        hrefs = links(page.text)
        for r in d["rows"]:  # every board one click from the viewer
            assert r["url"] in hrefs
        best_link = re.search(r'id="best-url" href="([^"]*)"', page.text)
        assert html.unescape(best_link.group(1)) == d["best_row"]["url"]
        assert page.text.count("<svg") >= 4 and "/tables" not in hrefs  # no store links
        jump = client.get("/boards/best", follow_redirects=False)
        assert jump.status_code == 307 and jump.headers["location"] == d["best_row"]["url"]
        home = client.get("/", follow_redirects=False)
        assert home.status_code == 307 and home.headers["location"] == "/boards"
        for path in ("/api/summary", "/tables", "/sql", "/api/sql?q=select%201"):
            r = client.get(path)
            assert r.status_code == 404 and "no store is served" in r.text, path


def test_serve_follows_a_file_written_after_its_start(game, tmp_path):
    inst, piece_file, boards = game
    out = tmp_path / "later.parquet"
    with TestClient(create_app(None, boards=out, boards_instance=piece_file)) as client:
        page = client.get("/boards")
        assert page.status_code == 200
        message = f"waiting for {out}: the run writes it after its first restart"
        assert client.get("/api/boards").json()["message"] == message
        assert "W" + message[1:] in page.text
        assert 'http-equiv="refresh"' in page.text
        assert client.get("/api/boards").json()["waiting"] is True
        assert client.get("/boards/best").status_code == 404
        write_boards(out, inst, make_boards(25, boards.cells[:3], [boards.row(i)
                                                                   for i in range(3)]))
        d = client.get("/api/boards").json()
        assert d["waiting"] is False and d["boards"] == 3
        write_boards(out, inst, boards)  # the run goes on: read afresh
        assert client.get("/api/boards").json()["boards"] == 8
        page = client.get("/boards")
        assert "waiting" not in page.text and 'id="best-url"' in page.text


def test_serve_follows_a_boards_dataset(game, tmp_path):
    """`serve --boards DIR`: a dataset's parts, every arm, read afresh; waited for while
    it holds no part."""
    from e2store.boards.dataset import read_boards_dataset, write_part

    inst, piece_file, boards = game
    out = tmp_path / "ds"
    with TestClient(create_app(None, boards=out, boards_instance=piece_file)) as client:
        assert client.get("/api/boards").json()["waiting"] is True
        for k in range(8):
            write_part(out, inst, make_boards(25, boards.cells[k:k + 1], [boards.row(k)]),
                       arm="ab"[k % 2], seed=3, restart=k)
            if k == 2:
                assert client.get("/api/boards").json()["boards"] == 3
        d = client.get("/api/boards").json()
        b = read_boards_dataset(out, inst).boards
        assert d["boards"] == len(b) == 8 and not d["waiting"]
        assert d["best_row"]["url"] == board_url(inst, b.cells[best_row(b)].astype(np.int64))
        assert client.get("/boards").status_code == 200


def test_an_instance_nowhere_to_be_found_is_one_clear_line(game, tmp_path):
    inst, piece_file, boards = game
    out = tmp_path / "b.parquet"
    write_boards(out, inst, boards)
    with pytest.raises(MissingError, match="start the server with --boards-instance "
                                           "PIECE_FILE") as e:
        create_app(None, boards=out)
    assert "no store is served" in str(e.value) and inst.id in str(e.value)
    other = tmp_path / "store"
    store.enumerate_store(other, random_instance(3, 3, 1), 1, None)
    with pytest.raises(MissingError, match="the store holds no copy of it"):
        create_app(other, boards=out)
    r = CliRunner().invoke(main, ["serve", "--boards", str(out)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    assert "--boards-instance PIECE_FILE" in r.output
    r = CliRunner().invoke(main, ["serve", "--boards", str(tmp_path / "not-yet.parquet")])
    assert r.exit_code == 2 and "is not there yet" in r.output
    r = CliRunner().invoke(main, ["serve"])
    assert r.exit_code == 2 and "--boards FILE" in r.output


def test_serve_cli_with_boards_alone(game, tmp_path, monkeypatch):
    import uvicorn

    _, piece_file, _ = game
    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(kw))
    out = tmp_path / "not-yet.parquet"
    r = CliRunner().invoke(main, ["serve", "--boards", str(out), "--boards-instance",
                                  str(piece_file)])
    assert r.exit_code == 0, r.output
    assert f"serving the boards file {out}" in r.output and calls


class _Refs(HTMLParser):
    """Every URL an HTML page makes a browser load or link to."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.urls += [v for k, v in attrs if k in ("src", "href", "action") and v]


@pytest.mark.parametrize("with_assets", [True, False])
def test_api_docs_reference_no_external_url(game, tmp_path, monkeypatch, with_assets):
    import e2store.web.app as web_app

    if not with_assets:
        monkeypatch.setattr(web_app, "docs_assets", lambda: None)
    elif web_app.docs_assets() is None:
        pytest.skip("fastapi-offline is not installed (pip install '.[web]')")
    _, piece_file, _ = game
    app = create_app(None, boards=tmp_path / "b.parquet", boards_instance=piece_file)
    with TestClient(app) as client:
        page = client.get("/api/docs")
        assert page.status_code == 200
        refs = _Refs()
        refs.feed(page.text)
        assert refs.urls
        assert not re.search(r"(https?:)?//[a-z0-9]", page.text, re.I), page.text
        for url in refs.urls:
            assert url.startswith("/"), url
            got = client.get(url)
            assert got.status_code == 200 and len(got.content) > 100, url
        assert "/api/openapi.json" in page.text
        assert client.get("/api/openapi.json").json()["paths"]["/api/boards"]
        if with_assets:
            assert any(u.endswith("swagger-ui-bundle.js") for u in refs.urls)
            assert '"validatorUrl": null' in page.text

"""`e2store serve`: a local, read-only web explorer of a store (issue 25).

`create_app(store)` returns the ASGI application (FastAPI): HTML pages rendered on the
server from Jinja2 templates (no JavaScript build step; a few lines of inline script make
the zone map clickable) and, for every page, its data as JSON under `/api/...`
(`e2store.web.data`; the OpenAPI description at `/api/openapi.json`, browsable at
`/api/docs`: Swagger UI from the files the `fastapi-offline` package ships, served here, so
the page works without a network).  `store` may be None when a boards file is shown alone
(`boards`): the store's pages then answer 404 saying so.  Bad input is a 4xx page (or
JSON under `/api`) saying what was wrong; the server keeps running.  Every parameter is
checked before any work (`e2store.web.data`); the server's queries share one DuckDB memory
limit (`memory_limit`), the SQL box's have a time limit (`sql_seconds`), and `e2store
serve` caps the process's memory (`cap_process_memory`).  A request the server has no
memory for is a 503, never a 500.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterable
from pathlib import Path

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from e2store.errors import E2StoreError, MissingError, ZoneError
from e2store.query import CorolleStore, connect
from e2store.query.limits import DEFAULT_MEMORY_LIMIT
from e2store.web.boards import BoardsSource, boards_page
from e2store.web.campaign import campaign_page
from e2store.web.data import (
    PAGE_SIZE,
    SQL_MAX_ROWS,
    SQL_ROWS,
    SQL_SECONDS,
    BadParameter,
    cell_page,
    corolles_page,
    instance_page,
    overview,
    shown,
)
from e2store.web.reports import records_tables, results_file, results_listing, store_tables
from e2store.web.sqlbox import SqlBox, SqlBusy
from e2store.web.status import run_status

TEMPLATES = Path(__file__).resolve().parent / "templates"


DOCS_ASSETS = "/api/docs-assets"  # where Swagger UI's script, style and icon are served
NO_STORE = ("no store is served: this server shows a boards file alone (start it with "
            "--store DIR for the store's pages)")


def docs_assets() -> Path | None:
    """The directory of Swagger UI's files that the `fastapi-offline` package ships
    (`swagger-ui-bundle.js`, `swagger-ui.css`, `favicon.png`), or None when it is not
    installed (the `web` extra installs it)."""
    try:
        import fastapi_offline
    except ImportError:
        return None
    found = Path(fastapi_offline.__file__).resolve().parent / "static"
    need = ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")
    return found if all((found / f).is_file() for f in need) else None


def create_app(store: str | Path | None, *, results: str | Path | None = None,
               records: str | Path | None = None, status: Iterable[str | Path] = (),
               sql_seconds: float = SQL_SECONDS,
               memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
               boards: str | Path | None = None,
               boards_instance: str | Path | None = None) -> FastAPI:
    """The explorer of the store at `store` (StoreError at once if it is none), of the
    pipeline's `results` directory and a count-`records` directory when given, and of the
    long runs `status` names (status files of `--status FILE`, or Snakemake working
    directories).  `sql_seconds`: the SQL box's time limit; `memory_limit`: the bytes the
    server's queries may use together (one DuckDB database, one cursor per thread);
    `boards`: a boards file of `e2store best`, perhaps not written yet (its instance: the
    piece file `boards_instance`, else the store's copy).  `store` None: no store (only
    with `boards`); its pages answer 404 saying so."""
    if store is None and boards is None:
        raise MissingError("no store and no boards file to show (expected a store, or a "
                           "boards file: --boards FILE)")
    followed = [Path(p) for p in status]
    records = None if records is None else Path(records)
    root = None if store is None else connect(store, memory_limit=memory_limit)  # checked
    box = None if root is None else SqlBox(root, seconds=sql_seconds,
                                           memory_limit=memory_limit)  # worker processes
    results = None if results is None else Path(results).resolve()
    boards_src = None if boards is None else BoardsSource(boards, root, boards_instance)
    if boards_src is not None:
        boards_src.check()  # a wrong file, or no way to its instance: an error at start
    assets = docs_assets()
    local = threading.local()  # a DuckDB handle per server thread (`CorolleStore.cursor`)

    def handle() -> CorolleStore:
        if root is None:
            raise MissingError(NO_STORE)
        if getattr(local, "store", None) is None:
            local.store = root.cursor()
        return local.store

    @functools.lru_cache(maxsize=256)
    def snapshot(fn, *args, **kw) -> dict:
        """`fn(store, ...)` computed once per server: the store is seen as it was when the
        server started (the handle's manifest), so a page of it does not change; errors
        are not kept."""
        return fn(handle(), *args, **kw)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        if box is not None:
            box.close()  # the SQL box's worker processes end with the server

    shows = (f"the corolle store {root.root}" if root is not None
             else f"the boards file {boards_src.path}" if boards_src is not None else "")
    app = FastAPI(title="e2store explorer", docs_url=None, redoc_url=None,
                  openapi_url="/api/openapi.json", lifespan=lifespan,
                  description=f"A read-only view of {shows}.")
    templates = Jinja2Templates(directory=str(TEMPLATES))

    def page(request: Request, name: str, data: dict, status: int = 200) -> HTMLResponse:
        return templates.TemplateResponse(request, name, {
            "d": data, "store": "" if root is None else str(root.root), "has_store":
            root is not None, "results": results, "records": records,
            "boards": None if boards_src is None else boards_src.path},
            status_code=status)

    def failure(request: Request, status: int, message: str):
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message, "status": status}, status_code=status)
        return page(request, "error.html", {"status": status, "message": message}, status)

    @app.exception_handler(MissingError)
    async def missing(request: Request, exc: MissingError):
        return failure(request, 404, str(exc.args[0] if exc.args else exc))

    @app.exception_handler(E2StoreError)
    async def bad_input(request: Request, exc: E2StoreError):
        return failure(request, 400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        what = "; ".join(f"{'.'.join(map(str, e['loc'][1:]))}: {e['msg']}"
                         for e in exc.errors())
        return failure(request, 400, f"bad request: {what}")

    @app.exception_handler(SqlBusy)
    async def busy(request: Request, exc: SqlBusy):
        return failure(request, 503, str(exc))

    @app.exception_handler(MemoryError)
    async def no_memory(request: Request, exc: MemoryError):
        return failure(request, 503, "the server has no memory left for this request: try "
                                     "a smaller one, or later")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        message = ("no such page: see / for the store's pages and /api/docs for the API"
                   if exc.status_code == 404 else str(exc.detail))
        return failure(request, exc.status_code, message)

    # the store --------------------------------------------------------------------------
    @app.get("/api/summary", tags=["store"])
    def api_summary() -> dict:
        """The store: format version, checksum, totals, per instance/hamming/form figures
        (what `e2store summary` prints) and the instances it holds."""
        return snapshot(overview)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def home(request: Request):
        if root is None:  # a boards file shown alone: its page is the home page
            return RedirectResponse("/boards", status_code=307)
        return page(request, "overview.html", snapshot(overview))

    # the API's documentation, from local files --------------------------------------------
    if assets is not None:
        app.mount(DOCS_ASSETS, StaticFiles(directory=str(assets)), name="docs-assets")

    @app.get("/api/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs():
        if assets is None:
            return HTMLResponse(
                "<!doctype html><title>e2store explorer API</title><p>The API is described "
                "at <a href=\"/api/openapi.json\">/api/openapi.json</a>.  Its browsable page "
                "needs Swagger UI's files from the <code>fastapi-offline</code> package: "
                "<code>pip install 'e2store[web]'</code>.</p>")
        return get_swagger_ui_html(
            openapi_url="/api/openapi.json", title="e2store explorer API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png",
            swagger_ui_parameters={"validatorUrl": None})  # no call to an online validator

    # instances and cells ------------------------------------------------------------------
    @app.get("/api/instances/{instance}", tags=["instances"])
    def api_instance(instance: str, hamming: int | None = None) -> dict:
        """An instance: statistics, zones of `hamming` (default: the lowest stored) and their
        figures per form."""
        return snapshot(instance_page, instance, hamming, pictures=False)

    @app.get("/instances/{instance}", response_class=HTMLResponse, include_in_schema=False)
    def instance_html(request: Request, instance: str, hamming: int | None = None):
        return page(request, "instance.html", snapshot(instance_page, instance, hamming))

    @app.get("/api/instances/{instance}/cells/{x}/{y}", tags=["instances"])
    def api_cell(instance: str, x: int, y: int) -> dict:
        """A cell: its zone, rotation and canonical cell per hamming, and that partition's
        corolles, rows and bytes per form."""
        return cell_page(handle(), instance, x, y)

    @app.get("/instances/{instance}/cells/{x}/{y}", response_class=HTMLResponse,
             include_in_schema=False)
    def cell_html(request: Request, instance: str, x: int, y: int):
        return page(request, "cell.html", cell_page(handle(), instance, x, y))

    # the corolle browser ------------------------------------------------------------------
    def browse(instance: str, x: int, y: int, hamming: int | None, offset: int, size: int,
               slot: int | None, placement: int | None, without: str, pictures: bool):
        st = handle()
        if hamming is None:
            held = [r["hamming"] for r in cell_page(st, instance, x, y)["hammings"]]
            hamming = held[0] if held else 0
        return corolles_page(st, instance, hamming, x, y, offset=offset, size=size,
                             slot=slot, placement=placement, without=_pieces(without),
                             pictures=pictures)

    @app.get("/api/instances/{instance}/cells/{x}/{y}/corolles", tags=["instances"])
    def api_corolles(instance: str, x: int, y: int, hamming: int | None = None,
                     offset: int = 0, size: int = PAGE_SIZE, slot: int | None = None,
                     placement: int | None = None, without: str = "") -> dict:
        """A page of the corolles at (x, y) (packed `piece*4+r` per slot in ring order, -1
        off the board), in stored order from `offset`, among those with `placement` at
        `slot` and none of the pieces `without` (comma-separated); their `total`; and the
        distinct pieces per slot of the cell's partition (`cardinality`)."""
        return browse(instance, x, y, hamming, offset, size, slot, placement, without,
                      False)

    @app.get("/instances/{instance}/cells/{x}/{y}/corolles", response_class=HTMLResponse,
             include_in_schema=False)
    def corolles_html(request: Request, instance: str, x: int, y: int,
                      hamming: int | None = None, offset: int = 0, size: int = PAGE_SIZE,
                      slot: str = "", placement: str = "", without: str = ""):
        data = browse(instance, x, y, hamming, offset, size, _optional(slot, "slot"),
                      _optional(placement, "placement"), without, True)
        return page(request, "corolles.html", data)

    # tables, plots and results --------------------------------------------------------------
    @app.get("/api/tables", tags=["tables"])
    def api_tables(form: str = "flat") -> dict:
        """The store's statistics tables of `form`: per metric (corolles, nodes, seconds,
        bytes per corolle) and hamming, a row per zone cell and a value per board (null:
        no zone cell there; "missing": not in the store)."""
        return snapshot(store_tables, form, pictures=False)

    @app.get("/tables", response_class=HTMLResponse, include_in_schema=False)
    def tables_html(request: Request, form: str = "flat"):
        return page(request, "tables.html", snapshot(store_tables, form))

    @app.get("/api/counts", tags=["tables"])
    def api_counts() -> dict:
        """The exact count tables (corolles, seconds) of the count-records directory, for
        the instances the store holds (`skipped`: the others)."""
        return records_tables(handle(), records, pictures=False)

    @app.get("/counts", response_class=HTMLResponse, include_in_schema=False)
    def counts_html(request: Request):
        data = records_tables(handle(), records)
        return page(request, "tables.html", {**data, "heading": "Count tables"})

    @app.get("/api/results", tags=["tables"])
    def api_results() -> dict:
        """The results directory's CSV tables (parsed), images, JSON and Markdown files."""
        return results_listing(results)

    @app.get("/results", response_class=HTMLResponse, include_in_schema=False)
    def results_html(request: Request):
        return page(request, "results.html", results_listing(results))

    @app.get("/results/files/{path:path}", tags=["tables"])
    def results_file_get(path: str) -> FileResponse:
        """One file of the results directory (tables, images, JSON, Markdown only)."""
        found, media = results_file(results, path)
        return FileResponse(found, media_type=media)

    # long runs ------------------------------------------------------------------------------
    @app.get("/api/status", tags=["status"])
    def api_status() -> dict:
        """Each followed run: its state (running, done, failed, interrupted, stale, not
        started), its tasks (done, total, rate, ETA, found so far) and its error if any."""
        return {"runs": [run_status(p) for p in followed]}

    @app.get("/status", response_class=HTMLResponse, include_in_schema=False)
    def status_html(request: Request):
        return page(request, "status.html", {"runs": [run_status(p) for p in followed]})

    # a best-score run's boards file, or a campaign's boards dataset ---------------------
    def boards_data(pictures: bool) -> dict:
        """The boards page's data: of a dataset, a campaign's (`campaign_page`)."""
        if boards_src is not None and boards_src.path.is_dir():
            return campaign_page(boards_src, pictures=pictures)
        return boards_page(boards_src, pictures=pictures)

    @app.get("/api/boards", tags=["status"])
    def api_boards() -> dict:
        """The boards file or dataset of `--boards` (read now): its rows by score, each
        with its e2.bucas.name URL (`url`), the best board (`best_row`: the highest-scoring
        filled board, else the deepest, then highest-scoring), the best score per source,
        the count of boards per score; `waiting` while the file is not written yet.  Of a
        dataset, each row's `arm` too, and `campaign` (as `/api/campaign`)."""
        return boards_data(False)

    @app.get("/api/campaign", tags=["status"])
    def api_campaign() -> dict:
        """The boards dataset of `--boards` as a campaign (read now): `shards` (per arm,
        seed and shard: restarts, nodes, seconds, placements per second `rate`, best
        `score` and `depth`, `last` board's time, `state` done/running/stopped), `arms`
        (restarts, rate, depth and filled score mean and median with 95% intervals, the
        fractions reaching `depths`, the tail's core-hours to `targets`, the arm's `best`
        board with its URL), `comparisons` (each pair on depth and filled score: the
        Mann-Whitney test), `live`; `waiting` while no part is there."""
        if boards_src is None or not boards_src.path.is_dir():
            raise MissingError(f"{boards_src.path if boards_src else 'no boards file'}: "
                               "not a boards dataset (a campaign's boards are a directory: "
                               "serve --boards DIR)")
        data = campaign_page(boards_src, pictures=False)
        return data["campaign"] if "campaign" in data else data

    @app.get("/boards", response_class=HTMLResponse, include_in_schema=False)
    def boards_html(request: Request):
        data = boards_data(True)
        return page(request, "campaign.html" if "campaign" in data else "boards.html", data)

    @app.get("/boards/best", include_in_schema=False)
    def boards_best():
        """The best board in the viewer (a redirect to its URL)."""
        best = boards_data(False)["best_row"]
        if best is None or not best.get("url"):
            raise MissingError(f"{boards_src.path if boards_src else 'no boards file'}: no "
                               "board to show yet" if best is None else
                               "the best board has no viewer URL (more than 26 colours or "
                               "999 pieces)")
        return RedirectResponse(best["url"], status_code=307)

    # SQL ------------------------------------------------------------------------------------
    @app.get("/api/sql", tags=["sql"])
    def api_sql(q: str, limit: int = Query(SQL_ROWS, ge=1, le=SQL_MAX_ROWS)) -> dict:
        """One read-only SELECT over the views (corolles, stems, manifest, zone_stats,
        instances): at most `limit` rows, stopped after the server's time limit."""
        if box is None:
            raise MissingError(NO_STORE)
        return box.run(q, limit)

    @app.get("/sql", response_class=HTMLResponse, include_in_schema=False)
    def sql_html(request: Request, q: str = "",
                 limit: int = Query(100, ge=1, le=SQL_MAX_ROWS)):
        if box is None:
            raise MissingError(NO_STORE)
        if not q.strip():
            return page(request, "sql.html", {"query": "", "limit": limit})
        return page(request, "sql.html", box.run(q, limit))

    return app


MAX_DIGITS = 18  # a number field's longest spelling (any piece, slot or placement fits)
MAX_PIECES_TEXT = 100_000  # characters of the longest `without` list


def _number(word: str) -> bool:
    """Whether `word` is a plain decimal number short enough to read (ASCII digits:
    `int` reads other scripts' digits, and refuses very long ones)."""
    return word.isascii() and word.isdigit() and len(word) <= MAX_DIGITS


def _pieces(text: str) -> list[int]:
    """Piece numbers from `1, 5 9` (commas or spaces); ZoneError naming a bad one."""
    if len(text) > MAX_PIECES_TEXT:
        raise BadParameter(f"without: {len(text):,} characters (at most "
                           f"{MAX_PIECES_TEXT:,})")
    out = []
    for word in text.replace(",", " ").split():
        if not _number(word):
            raise ZoneError(f"without: {shown(word)} is not a piece number (expected "
                            f"numbers separated by commas, e.g. 3,17)")
        out.append(int(word))
    return out


def _optional(text: str, what: str) -> int | None:
    """An optional integer form field: empty is None."""
    text = text.strip()
    if not text:
        return None
    if not _number(text.removeprefix("-")):
        raise ZoneError(f"{what}: {shown(text)} is not a number")
    return int(text)

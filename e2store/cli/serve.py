"""`e2store serve`: the local web explorer of a store (e2store.web)."""

from __future__ import annotations

from pathlib import Path

import click

from e2store.cli.command import command
from e2store.cli.options import BoundedInt, FiniteFloat, memory_limit_option, store_option
from e2store.web.defaults import SQL_SECONDS

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@command("serve", examples=["e2store serve --store store/",
                            "e2store serve --store store/ --port 9000",
                            "e2store serve --boards best.parquet --boards-instance e2.puz"])
@store_option(required=False, help="Corolle store directory (optional with --boards).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but this machine's loopback serves the "
                   "store to the network (a warning says so).")
@click.option("--port", type=BoundedInt(0, 65535), default=8765, show_default=True,
              help="Port to listen on.")
@click.option("--results", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Also show this results directory's tables, plots and "
                                 "summaries (the pipeline's `results:` folder).")
@click.option("--records", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Also show the count tables of this count-records "
                                 "directory (`e2store tabulate --records DIR`).")
@click.option("--status", "status", multiple=True,
              type=click.Path(path_type=Path), metavar="FILE|DIR",
              help="Follow a long run: a status file (`solve`/`tabulate --status FILE`) or a "
                   "Snakemake working directory; repeatable.  Shown at /status.")
@click.option("--sql-seconds", type=FiniteFloat(0.1, 3600), default=SQL_SECONDS,
              show_default=True, help="Time limit of a query in the SQL box.")
@memory_limit_option("Memory the server's queries may use (DuckDB's memory limit), and the "
                     "cap on the SQL box's worker process: this much above what it holds "
                     "once started, plus a quarter, and 512 MiB for Python.")
@click.option("--boards", type=click.Path(path_type=Path),
              default=None, metavar="FILE|DIR", help="A boards file or dataset of `solve "
              "--best` (read on each request; waited for when not written yet): every "
              "board linked to the "
              "viewer, the best ones drawn, the best score over the restarts, at /boards.  "
              "Alone, without --store, it is the whole site.")
@click.option("--boards-instance", type=click.Path(exists=True, dir_okay=False,
                                                   path_type=Path),
              default=None, metavar="PIECE_FILE", help="The instance of --boards when no "
              "store given holds it (a boards file names its instance, not its pieces).")
def serve(store: Path | None, host: str, port: int, results: Path | None,
          records: Path | None,
          status: tuple[Path, ...], sql_seconds: float, memory_limit: int,
          boards: Path | None = None, boards_instance: Path | None = None) -> None:
    """Serve a read-only web explorer of a store: its overview, instances, zones, cells and
    corolles, tables and plots, count tables, a results directory, the status of long runs,
    and an SQL box; each page's data also as JSON under /api (documented at /api/docs).

    Every request's parameters are checked before any work (out of range: a 4xx answer).
    The SQL box runs each query in a worker process: past its time limit (killed a little
    later if it does not stop) or the memory limit, it is refused (400).

    With --boards FILE|DIR it also shows a best-score run's boards file or dataset, and
    without --store only that (the store's pages answer 404).

    Runs until interrupted (Ctrl-C).  Needs the `web` extra: pip install 'e2store[web]'.
    """
    if store is None and boards is None:
        raise click.UsageError("give --store DIR, or --boards FILE to show a best-score "
                               "run's boards alone")
    try:
        import uvicorn

        from e2store.web.app import create_app
    except ImportError as exc:
        raise click.ClickException(f"{exc.name} is not installed: pip install "
                                   f"'e2store[web]' for `e2store serve`") from None
    app = create_app(store, results=results, records=records, status=status,
                     sql_seconds=sql_seconds, memory_limit=memory_limit, boards=boards,
                     boards_instance=boards_instance)
    if host not in LOCAL_HOSTS:
        click.echo(f"e2store serve: warning: listening on {host}: anyone who reaches this "
                   f"machine on port {port} can read what it serves", err=True)
    what = store if store is not None else (
        f"the boards {'dataset' if Path(str(boards)).is_dir() else 'file'} {boards}")
    click.echo(f"serving {what} on http://{host}:{port}/ (Ctrl-C stops)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")

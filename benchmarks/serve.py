"""Benchmark the web explorer (`e2store serve`): latency and throughput of its pages.

Builds a store of benchmark `pieces_6x6.txt` (from ../shared) at hamming 1 (every zone,
flat and cartesian) and hamming 2 at the zone of (2,1) (86 M corolles, flat), starts the
server (uvicorn on 127.0.0.1, in this process) and asks each page --requests times from
--clients concurrent client threads; prints per page the median and 95th-percentile
latency, requests per second, and the process's peak memory.

    python benchmarks/serve.py [--shared ../shared] [--requests 200] [--clients 8]
        [--store DIR]  (an existing store to reuse; built there when missing)
"""

from __future__ import annotations

import argparse
import resource
import socket
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _data import piece_file
from _host import cpu_model

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--store", type=Path, default=None)
    args = ap.parse_args()
    path = piece_file(args.shared, "6x6")
    import httpx
    import uvicorn

    from e2store import store
    from e2store.instance.formats import read_instance
    from e2store.web.app import create_app
    from e2store.zones.zonemap import zone_map

    inst = read_instance(path)
    root = args.store or Path(tempfile.mkdtemp(prefix="e2serve-")) / "store"
    if not (root / "manifest.json").exists():
        t = time.perf_counter()
        store.enumerate_store(root, inst, 1, None, forms=("flat", "cartesian"), threads=2)
        store.enumerate_store(root, inst, 2, [zone_map(6, 6, 2).zone_at(2, 1).id], threads=2)
        print(f"built {root} in {time.perf_counter() - t:.1f} s")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(create_app(root), host="127.0.0.1", port=port,
                                       log_level="error"))
    threading.Thread(target=srv.run, daemon=True).start()
    while not srv.started:
        time.sleep(0.05)
    iid = inst.id
    pages = {
        "overview (HTML)": "/",
        "summary (JSON)": "/api/summary",
        "instance (HTML, SVGs)": f"/instances/{iid}?hamming=2",
        "cell (JSON)": f"/api/instances/{iid}/cells/2/1",
        "corolles h2 (2,1), page 1 (HTML)": f"/instances/{iid}/cells/2/1/corolles?hamming=2",
        "corolles h2 (2,1), offset 1e6 (JSON)":
            f"/api/instances/{iid}/cells/2/1/corolles?hamming=2&offset=1000000",
        "SQL: count per zone h1 (JSON)":
            "/api/sql?q=SELECT%20zone,count(*)%20FROM%20corolles%20WHERE%20hamming=1"
            "%20GROUP%20BY%20zone",
        "tables (HTML, plots)": "/tables",
    }
    print(f"host: {cpu_model()}")
    print(f"{args.requests} requests per page, {args.clients} client threads")
    print(f"{'page':<40}{'p50 ms':>9}{'p95 ms':>9}{'req/s':>9}")
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120,
                      limits=httpx.Limits(max_connections=args.clients)) as client:
        for name, url in pages.items():
            assert client.get(url).status_code == 200, url  # warm: handles, caches

            def one(_: int, url: str = url) -> float:
                t = time.perf_counter()
                r = client.get(url)
                assert r.status_code == 200, (url, r.status_code)
                return time.perf_counter() - t

            t0 = time.perf_counter()
            with ThreadPoolExecutor(args.clients) as pool:
                lat = sorted(pool.map(one, range(args.requests)))
            wall = time.perf_counter() - t0
            p50, p95 = lat[len(lat) // 2], lat[int(len(lat) * 0.95) - 1]
            print(f"{name:<40}{p50 * 1e3:>9.1f}{p95 * 1e3:>9.1f}"
                  f"{args.requests / wall:>9.1f}", flush=True)
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    srv.should_exit = True
    return 0


if __name__ == "__main__":
    sys.exit(main())

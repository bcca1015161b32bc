"""Block closures: the table that tells a search, in one probe, that the interior block
left under a row can no longer be filled (docs/solver.md, *Block closures*).

On a W x H board the *block* is the interior cells of rows H-3 and H-2 (columns 1..W-2),
the *row* the cells (1..W-2, H-4) just north of it.  Once a search has placed every
interior cell outside the block and the row, the block must take exactly the interior
pieces still free, S, under the south colours P of the row: the remaining problem's
interior part has a solution only if (S, P) is the key of some filling of the block.  The
table holds the key of every filling (enumerated once, `_closure_kernels`) in a blocked
Bloom filter: a key it lacks is certainly infeasible, so the branch is cut; a false
positive only keeps a branch the search then explores, so solutions are exact.

Measured (benchmarks/closures.py, docs/benchmarks.md): on benchmark 7x7 a rowscan probe
after cell (5, 3) cuts 73% of the nodes; each probe costs about one memory access.

Building: the filter is sized from `estimate_fillings`, then filled by threads walking
disjoint shares of the fillings and or-ing bits atomically (`_closure_kernels.walk_block`).

The table is stored in the store under `closures/`, as the raw filter (`.bloom`, little-
endian 64-bit words) and a JSON header naming the instance's fingerprint, the geometry,
the number of fillings and the filter's SHA-256.  A search loads it into anonymous memory
advised for huge pages (each probe is a random access; with 4 KiB pages most probes
also miss the TLB: huge pages measured 10% faster on 7x7), one copy per process.  A table
whose copies would not fit the memory budget is refused before it is built or loaded
(`ClosureBudgetError`).
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from e2store.errors import DamagedStoreError, E2StoreError, StoreError
from e2store.files import atomic_write, atomic_write_text, sha256_file
from e2store.instance.model import GREY, Instance
from e2store.store.records import DIGEST, dump_doc, load_doc

FORMAT = "e2store-block-closure/3"  # /1: six bits in a 512-bit block per key; /2: the
# same filter, its header without a digest (e2store.store.records)
DEFAULT_BUDGET = 2 << 30  # bytes: the default memory budget of a table
MIN_WORDS = 8  # one cache line
CLOSURES_DIR = "closures"


class ClosureBudgetError(E2StoreError, MemoryError):
    """A closure table would not fit the memory budget; says how large it would be and how
    to raise the budget."""


class ClosureError(E2StoreError, ValueError):
    """A closure table cannot be used: another instance or board, or a damaged file
    (says which file and how to rebuild it)."""


def colour_ranks(instance: Instance) -> tuple[np.ndarray, int]:
    """(4n, 4) colour ranks of every placement (sides W N E S; grey = 0) and the number of
    ranks: the ranks the solver's kernels use (`e2store.solver.plan.dense_colours`)."""
    rot = instance.rotated_table().astype(np.int64)
    values = np.unique(np.concatenate([[GREY], rot.ravel()]))
    return np.searchsorted(values, rot).astype(np.int64), len(values)


def fingerprint(instance: Instance) -> str:
    """SHA-256 of the board size and the piece table: what a table was built for."""
    h = hashlib.sha256(f"{instance.width}x{instance.height}:".encode())
    h.update(np.ascontiguousarray(instance.pieces, dtype=np.int64).tobytes())
    return h.hexdigest()


def applicable(width: int, height: int, n_pieces: int) -> str | None:
    """Why a board has no block closure, or None."""
    if width < 3 or height < 4:
        return f"a {width}x{height} board has no interior block below a row (needs W >= 3, H >= 4)"
    if n_pieces > 64:
        return f"{n_pieces} pieces (closures handle boards of up to 64 pieces)"
    return None


def block_cells(width: int, height: int) -> tuple[list[int], list[int]]:
    """(block cells, row cells) as cell indices y*W+x, each west to east, north row first."""
    block = [y * width + x for y in (height - 3, height - 2) for x in range(1, width - 1)]
    row = [(height - 4) * width + x for x in range(1, width - 1)]
    return block, row


def interior_tables(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(rot ranks, istart, icand, k_col, interior piece mask): interior placements by bucket
    west * k_col + north, ascending."""
    rot, k_col = colour_ranks(instance)
    interior = [p for p in range(instance.n_pieces) if not (rot[4 * p] == 0).any()]
    vs = np.array([4 * p + r for p in interior for r in range(4)], dtype=np.int64)
    key = rot[vs, 0] * k_col + rot[vs, 1] if len(vs) else np.zeros(0, np.int64)
    order = np.lexsort((vs, key))
    icand = vs[order]
    istart = np.zeros(k_col * k_col + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=k_col * k_col), out=istart[1:])
    mask = 0
    for p in interior:
        mask |= 1 << p
    return rot, istart, icand, k_col, mask


def table_words(fillings: int) -> int:
    """Filter size in 64-bit words: a power of two giving 8 to 16 bits per filling."""
    bits = max(MIN_WORDS * 64, 8 * max(1, fillings))
    return max(MIN_WORDS, 1 << (math.ceil(math.log2(bits)) - 6))


@dataclass
class ClosureTable:
    """A block closure table of one instance (see the module docstring)."""

    width: int
    height: int
    fingerprint: str
    k_col: int
    interior_mask: int
    fillings: int
    bloom: np.ndarray | None  # uint64 words; None: not loaded yet (`loaded`)
    build_seconds: float = 0.0
    path: Path | None = None
    built: bool = False  # made by this process (not read from the store)

    @property
    def block_width(self) -> int:
        return self.width - 2

    words: int = 0  # filter size in 64-bit words
    sha256: str = ""  # of the stored filter (empty for a table not read from a store)

    def __post_init__(self) -> None:
        if self.bloom is not None:
            self.words = int(self.bloom.shape[0])

    @property
    def nbytes(self) -> int:
        return self.words * 8

    def loaded(self) -> ClosureTable:
        """This table with its filter in memory (read from `path` when not loaded yet, not
        re-hashed: `read_closure` did that)."""
        if self.bloom is not None:
            return self
        assert self.path is not None
        return replace(self, bloom=_load_words(self.path, self.words, None))

    def __getstate__(self) -> dict:
        """Pickled without the filter when it can be read back from its file (worker
        processes load their own copy)."""
        state = dict(self.__dict__)
        if self.path is not None:
            state["bloom"] = None
        return state

    def cells(self) -> tuple[list[int], list[int]]:
        """(block cells, row cells) of this board (`block_cells`)."""
        return block_cells(self.width, self.height)

    def check_instance(self, instance: Instance) -> None:
        """ClosureError unless the table was built for `instance`."""
        if self.fingerprint != fingerprint(instance):
            raise ClosureError(f"closure table {self.path or ''} was built for another "
                               f"instance or board than {instance.name!r} "
                               f"({instance.width}x{instance.height})")

    def probe(self, pieces: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """1 where key (pieces, code) may be a filling's, 0 where it certainly is not."""
        from e2store.query._closure_kernels import probe_keys

        return probe_keys(self.bloom, np.asarray(pieces, np.uint64),
                          np.asarray(codes, np.uint64))

    def summary(self) -> dict:
        """What the table is, for reports (`--json`)."""
        return {"block": [self.block_width, 2], "row": self.height - 4,
                "fillings": self.fillings, "table_bytes": self.nbytes,
                "build_seconds": round(self.build_seconds, 3), "built": self.built,
                "path": None if self.path is None else str(self.path)}


def build_closure(instance: Instance, budget: int = DEFAULT_BUDGET, threads: int = 2,
                  log: Callable[[str], None] | None = None) -> ClosureTable:
    """Enumerate the block's fillings into a new table; ClosureBudgetError (before anything
    is allocated) when its filter would exceed `budget` bytes."""
    why = applicable(instance.width, instance.height, instance.n_pieces)
    if why is not None:
        raise ClosureError(f"instance {instance.name!r}: {why}")
    from e2store.query import _closure_kernels as CK

    t0 = time.perf_counter()
    rot, istart, icand, k_col, mask = interior_tables(instance)
    bw = instance.width - 2
    cap = max(1, budget)  # fillings that fit at 8 bits (one byte) each
    parts = max(1, int(threads))
    about = estimate_fillings(rot, istart, icand, k_col, bw, cap, parts)
    need = table_words(about) * 8
    if about > cap or need > budget:
        more = "more than " if about > cap else "about "
        raise ClosureBudgetError(
            f"the closure table of {instance.name!r} ({bw}x2 block, {more}{about:,} "
            f"fillings) needs {'over ' if about > cap else ''}{need / 2**20:,.0f} MiB, over "
            f"the memory budget of {budget / 2**20:,.0f} MiB; raise the budget or solve "
            f"without the store").about("memory_budget")
    bloom = _huge_words(table_words(about))  # inserts are random writes too
    with ThreadPoolExecutor(parts) as pool:  # the kernel releases the GIL
        n = sum(pool.map(lambda k: CK.fill_bloom(rot, istart, icand, k_col, bw, bloom, k,
                                                 parts), range(parts)))
    took = time.perf_counter() - t0
    if log:
        log(f"closure: built the {bw}x2 block table of {instance.name} ({n:,} fillings, "
            f"{bloom.nbytes / 2**20:,.0f} MiB) in {took:.1f} s")
    return ClosureTable(instance.width, instance.height, fingerprint(instance), k_col, mask, n,
                        bloom, took, None, True)


ESTIMATE_SHARES = 8  # a large block's fillings are estimated from one share in this many
EXACT_BELOW = 1 << 20  # ... unless that share holds fewer fillings: then they are counted


def estimate_fillings(rot, istart, icand, k_col, bw, cap, threads=2) -> int:
    """The block's fillings, to size the filter before it is filled (the fill counts them
    exactly): one share of `ESTIMATE_SHARES` counted and scaled (within a few percent: the
    shares interleave the second cell's placements), or the exact count when that share is
    small (then counting everything is cheap; by `threads` threads).  Stops early past
    `cap` (returns more than `cap`)."""
    from e2store.query import _closure_kernels as CK

    share = CK.count_fillings(rot, istart, icand, k_col, bw, cap // ESTIMATE_SHARES + 1, 0,
                              ESTIMATE_SHARES)
    if share >= EXACT_BELOW:
        return share * ESTIMATE_SHARES
    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(lambda k: CK.count_fillings(rot, istart, icand, k_col, bw, cap, k,
                                                        threads), range(threads)))


# -- the table's kernels behind public names (benchmarks/closure_probe.py, closures.py) -----

NUMBA_API = ("closure_key", "bloom_has", "walk_block")  # jitted, for numba callers: see below


def check_block_tables(rot, istart, icand, k_col: int, bw: int,
                       bloom: np.ndarray | None = None) -> None:
    """ValueError unless the arrays are tables of `interior_tables` for a `bw` x 2 block
    (and `bloom`, when given, a filter of `table_words` words, or empty for counting): the
    checks the kernels do not make.  Numba code that calls the `NUMBA_API` primitives in
    its own loop calls this once first."""
    arrays = {"rot": rot, "istart": istart, "icand": icand}
    for name, a in arrays.items():
        if not isinstance(a, np.ndarray) or a.dtype != np.int64 or not a.flags.c_contiguous:
            raise ValueError(f"{name} must be a C-contiguous int64 array (interior_tables)")
    if rot.ndim != 2 or rot.shape[1] != 4 or rot.shape[0] % 4 or rot.shape[0] > 4 * 64:
        raise ValueError(f"rot must be (4n, 4) colour ranks of n <= 64 pieces, got {rot.shape}")
    k_col, bw = int(k_col), int(bw)
    if k_col < 1 or istart.shape != (k_col * k_col + 1,):
        raise ValueError(f"istart must hold k_col * k_col + 1 = {k_col * k_col + 1} bucket "
                         f"starts, got {istart.shape}")
    if icand.ndim != 1 or int(istart[-1]) != icand.shape[0] or (np.diff(istart) < 0).any():
        raise ValueError("istart must be ascending bucket starts ending at len(icand)")
    if icand.size and (icand.min() < 0 or icand.max() >= rot.shape[0]):
        raise ValueError("icand must hold placements of rot's pieces (0 <= v < 4n)")
    if rot.size and (rot.min() < 0 or rot.max() >= k_col):
        raise ValueError(f"rot must hold colour ranks below k_col = {k_col}")
    if bw < 1:
        raise ValueError(f"the block needs a width of at least 1, got {bw}")
    if bloom is not None and (not isinstance(bloom, np.ndarray) or bloom.dtype != np.uint64
                              or bloom.ndim != 1 or bloom.shape[0] & (bloom.shape[0] - 1)):
        raise ValueError("bloom must be a 1-D uint64 array of a power-of-two number of "
                         "words (table_words), or empty")


def _check_share(part: int, parts: int) -> None:
    if not 0 <= int(part) < int(parts):
        raise ValueError(f"share {part} of {parts}: expected 0 <= part < parts")


def count_block_fillings(rot, istart, icand, k_col: int, bw: int, cap: int, part: int = 0,
                         parts: int = 1) -> int:
    """The fillings of the `bw` x 2 block in share `part` of `parts` (threads counting
    disjoint shares add up to every filling once), by the kernel `estimate_fillings` runs;
    counting stops just past `cap` (returns more than `cap`).  Releases the GIL."""
    check_block_tables(rot, istart, icand, k_col, bw)
    _check_share(part, parts)
    if int(cap) < 0:
        raise ValueError(f"cap must be >= 0, got {cap}")
    from e2store.query import _closure_kernels as CK

    return CK.count_fillings(rot, istart, icand, int(k_col), int(bw), int(cap), int(part),
                             int(parts))


def fill_block_table(rot, istart, icand, k_col: int, bw: int, bloom: np.ndarray,
                     part: int = 0, parts: int = 1) -> int:
    """Add the key of every filling in share `part` of `parts` to `bloom` (atomically when
    `parts` > 1: threads filling disjoint shares of one filter), by the kernel
    `build_closure` runs; returns that share's fillings.  Releases the GIL."""
    check_block_tables(rot, istart, icand, k_col, bw, bloom)
    _check_share(part, parts)
    if not bloom.shape[0]:
        raise ValueError("bloom is empty: count with count_block_fillings")
    from e2store.query import _closure_kernels as CK

    return CK.fill_bloom(rot, istart, icand, int(k_col), int(bw), bloom, int(part),
                         int(parts))


def __getattr__(name: str):
    """The `NUMBA_API` primitives, loaded on first use (this module starts without numba):
    `closure_key(pieces, code)` (a key's 64-bit hash), `bloom_has(bloom, h)` (one probe) and
    `walk_block(...)` (the block walk; see its docstring), jitted and inlined into the
    numba code that calls them, which checks its tables once (`check_block_tables`): they
    check nothing.  Python code uses `ClosureTable.probe`, `count_block_fillings`,
    `fill_block_table`."""
    if name in NUMBA_API:
        from e2store.query import _closure_kernels as CK

        return getattr(CK, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _paths(root: Path, instance: Instance) -> tuple[Path, Path]:
    stem = f"{instance.id}-{fingerprint(instance)[:16]}"
    d = Path(root) / CLOSURES_DIR
    return d / f"{stem}.bloom", d / f"{stem}.json"


def write_closure(root: str | Path, instance: Instance, table: ClosureTable) -> Path:
    """Store `table` under STORE/closures (filter then header, each atomically: a header
    only ever names a complete filter).  Returns the filter's path."""
    data_path, head_path = _paths(Path(root), instance)
    bloom = table.bloom
    assert bloom is not None, "write_closure: the table's filter is not in memory"
    digest = hashlib.sha256(bloom.data.cast("B")).hexdigest()  # .data: the array's memoryview
    words = bloom.astype("<u8", copy=False)  # no copy on a little-endian machine
    atomic_write(data_path, lambda fh: fh.write(words.data))
    head = {"format": FORMAT, "instance": instance.id, "name": instance.name,
            "fingerprint": table.fingerprint, "width": table.width, "height": table.height,
            "k_col": table.k_col, "interior_mask": str(table.interior_mask),
            "fillings": table.fillings, "words": int(bloom.shape[0]),
            "sha256": digest, "build_seconds": round(table.build_seconds, 3)}
    atomic_write_text(head_path, dump_doc(head))
    table.path = data_path
    return data_path


def _huge_buffer(size: int) -> mmap.mmap:
    """`size` zero bytes of anonymous memory, advised for transparent huge pages where the
    system has them (a random access then rarely misses the TLB)."""
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            buf.madvise(mmap.MADV_HUGEPAGE)
        except OSError:  # no transparent huge pages here: plain pages
            pass
    return buf


def _huge_words(words: int) -> np.ndarray:
    """A zeroed uint64 array in `_huge_buffer` memory."""
    return np.frombuffer(_huge_buffer(words * 8), dtype=np.uint64)


def _load_words(path: Path, words: int, sha256: str | None) -> np.ndarray:
    """The filter file's words in `_huge_buffer` memory; ClosureError when `sha256` is given
    and the bytes do not match it."""
    size = words * 8
    buf = _huge_buffer(size)
    h = hashlib.sha256()
    view = memoryview(buf)
    with open(path, "rb") as fh:
        at = 0
        while at < size:
            got = fh.readinto(view[at:min(size, at + (64 << 20))])
            if not got:
                break
            if sha256 is not None:
                h.update(view[at:at + got])
            at += got
    if at != size or (sha256 is not None and h.hexdigest() != sha256):
        raise ClosureError(f"{path}: the closure table does not match its recorded size and "
                           f"SHA-256 (damaged); delete it and its .json header and run again "
                           f"to rebuild it")
    return np.frombuffer(buf, dtype="<u8").view(np.uint64)


def read_closure(root: str | Path, instance: Instance, verify: bool = True,
                 load: bool = True) -> ClosureTable | None:
    """The stored table of `instance`, or None when the store has none or only one of
    another format (written by an older e2store: `open_closure` rebuilds it).  `load` reads
    the filter into memory (re-hashed against its header with `verify`: ClosureError when
    they differ); without it only the header is checked and `loaded()` reads it later."""
    data_path, head_path = _paths(Path(root), instance)
    if not head_path.exists():
        return None
    rebuild = f"delete {head_path} and {data_path} and run again to rebuild it"
    try:
        head = load_doc(head_path, root, "closure header")
    except DamagedStoreError as e:
        if _older_header(head_path):
            return None  # another version of the format: to be rebuilt
        raise ClosureError(f"{head_path}: damaged closure table header ({e.problem}); "
                           f"{rebuild}") from None
    try:
        if head.get("format") != FORMAT and str(
                head.get("format", "")).startswith(FORMAT.split("/")[0] + "/"):
            return None  # another version of the format: to be rebuilt
        words = int(head["words"])
        ok = (head["format"] == FORMAT and head["fingerprint"] == fingerprint(instance)
              and data_path.stat().st_size == words * 8)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ClosureError(f"{head_path}: unreadable closure table ({e}); {rebuild}") from None
    if not ok:
        raise ClosureError(f"{head_path}: closure table of another format, instance or size; "
                           f"{rebuild}")
    bloom = _load_words(data_path, words, head["sha256"] if verify else None) if load else None
    return ClosureTable(int(head["width"]), int(head["height"]), head["fingerprint"],
                        int(head["k_col"]), int(head["interior_mask"]), int(head["fillings"]),
                        bloom, float(head.get("build_seconds", 0.0)), data_path, False, words,
                        head["sha256"])


def _older_header(head_path: Path) -> bool:
    """Whether a header without a valid digest is one an older e2store wrote (a format
    before this one, whose headers had no digest): rebuilt, not an error."""
    try:
        head = json.loads(head_path.read_bytes())
        version = int(str(head["format"]).rsplit("/", 1)[1])
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError):
        return False
    return (DIGEST not in head and str(head["format"]).startswith(FORMAT.split("/")[0] + "/")
            and version < int(FORMAT.rsplit("/", 1)[1]))


def open_closure(root: str | Path, instance: Instance, budget: int = DEFAULT_BUDGET,
                 log: Callable[[str], None] | None = None, copies: int = 1) -> ClosureTable:
    """The closure table of `instance` from store `root`, built and stored first when the
    store lacks it (said through `log`); ClosureBudgetError when `copies` of it (one per
    searching process) would not fit `budget` bytes.  With `copies` > 1 the filter is
    checked but not loaded: each process calls `loaded()`."""
    root = Path(root)
    if not root.is_dir():
        raise StoreError(f"{root}: no such store directory (create it with `e2store enumerate "
                         f"... --store {root}` or `mkdir`)")
    copies = max(1, int(copies))
    table = read_closure(root, instance, load=False)
    built = None
    if table is None:
        if log and _paths(root, instance)[1].exists():
            log("closure: the stored table has an older format; building it again")
        built = build_closure(instance, budget // copies, log=log)
        write_closure(root, instance, built)
        table = read_closure(root, instance, load=False)
        assert table is not None
        table.built, table.build_seconds = True, built.build_seconds
    if table.nbytes * copies > budget:
        raise ClosureBudgetError(f"the closure table {table.path} takes "
                                 f"{table.nbytes / 2**20:,.0f} MiB per process, "
                                 f"{copies} x that is over the memory budget of "
                                 f"{budget / 2**20:,.0f} MiB; raise the budget"
                                 ).about("memory_budget")
    if built is None and log:
        log(f"closure: using {table.path} ({table.fillings:,} fillings, "
            f"{table.nbytes / 2**20:,.0f} MiB)")
    assert table.path is not None
    if copies == 1:  # loaded here, re-hashed unless this call just wrote it
        return replace(table, bloom=_load_words(table.path, table.words,
                                                None if built else table.sha256))
    # several processes: check the filter's hash once here, each process loads it
    if built is None and sha256_file(table.path) != table.sha256:
        raise ClosureError(f"{table.path}: the closure table does not match its recorded "
                           f"SHA-256 (damaged); delete it and its .json header and run again "
                           f"to rebuild it")
    return table

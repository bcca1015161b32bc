"""Private generated kernels: the solver's search written out as one loop per depth.

The generic kernel (`e2store.solver._kernels`) walks every depth with the same code, so it
reads the depth's row of the plan (cell, neighbour indices, bucket base) and keeps the
candidates, the used pieces and the colours shown in arrays indexed by depth.  For a
*complete* search of a subtree (no node limit, no first-solution stop, no finals) this
module writes the search for one plan out as Python source instead, one nested loop per
depth, the way the fastest edge-matching solvers generate their inner loop:

    k7 = 96 + c8_2 * 10 + c1_3           # bucket: constants of the plan, colours in locals
    x7 = bmask[k7] & ~u6                 # unused pieces of the bucket
    while x7:
        p7 = cttz(x7); x7 &= x7 - one   # next candidate: lowest set bit
        q7 = (k7 * 49 + p7) * 4
        nodes += 1
        u7 = u6 | (one << uint64(p7))    # used pieces below this depth: no undo at all
        c9_2 = colk[q7 + 2]              # only the sides later depths read
        ...                              # depth 8, nested

The plan's constants are literals, each depth's state lives in its own local variables
(undo is leaving the loop), and each depth's loop branch is its own branch to the CPU's
predictor: about 2x the generic kernel's nodes per second on benchmark 7x7.  A depth
whose class has a bucket holding a piece in two rotations walks the bits the same way and
then, in a second loop, that piece's records in the bucket (`rfirst`, `rcount`, colours in
`reck`); a depth that must check a third or fourth placed neighbour loops over the
bucket's records (`cand`, filtered by the used bit and the extra sides).  Candidates come
in ascending placement order in every form, so nodes and solutions are those of the
generic kernel and of the pure-Python twin `tests/naive_solver.py`, and solutions come
in the same order.

CPython refuses more than 20 nested loops in one function, so the depths are split into
chunks of at most `CHUNK` loops (two for a depth with a records loop), one function each;
every chunk but the first is inlined into its caller by numba (`inline="always"`), so the
compiled kernel is one function.
A chunk hands its state (each depth's bucket and bit or placement, and the colours later
depths read) to the next as arguments, packed in tuples (`_packs`): after inlining they
are plain values, so the kernel stores nothing but solutions.

Kernel signature (arrays in, counts out, no I/O): `f0(bmask, crec, colk, bstart, cand,
rfirst, rcount, reck, shown, placed, sols, n_out, bloom, ccount, memo, stash, used)` with
`shown`/`placed` holding the fixed cells' colours and pieces (as for the generic kernel),
`used` the fixed pieces' bit word; returns `(nodes, solutions)`, writes the first
`sols.shape[0]` solutions (packed cells, all of `placed`) into `sols` and their number
into `n_out[0]`.  Only boards of up to 64 pieces (one bit word) are generated; `supported`
says whether a plan can be.  The kernel of a distinct plan (`Plan.distinct`) places a piece
by toggling its bit and its next copy's (`TOG`, a constant of the module), so the copies of
a class are placed lowest first.

CLOSURE (only in a kernel generated with a `ClosureSpec`): after each placement on the
probe depth, the free interior pieces (`~u & mask`) and the row's south colours (a
base-`k_col` code) are looked up in the block closure table `bloom`
(`e2store.query.closures`); a key it lacks cuts the branch like a failed check (the node
is counted).  `ccount[0]` counts probes, `ccount[1]` cuts.  With the spec's row memo
(`e2store.solver.closure`), after each placement on the memo depth the key (free interior
pieces; the west border cell's east colour and the south colours above the row, a code) is
looked up in `memo` (a direct-mapped table of two words per slot, the slot by
`closure_key`; the code stored tagged with the generation `ccount[2]`, one per subtree, so
keys of earlier subtrees never match and the memo needs no clearing): a key recorded there is
cut (`ccount[3]`); otherwise, when the subtree below ends with no probe passed, the key is
recorded (`ccount[4]`).  Without a spec `bloom`, `ccount`, `memo` and `stash` are not
read.

BATCH (with a row memo and `STASH` > 0): a probe's word of `bloom` is a DRAM access, so the
kernel does not test a key when the walk reaches it: it computes the key, prefetches its
word (`prefetch_read`) and holds it in `stash` with the state the search below needs, then
walks on along the row.  When `STASH` keys are held, and when the memo depth's placement
has no more rows to walk, the held keys are tested in the order they were held, and the
search goes on below each one that passes (the chunk after the probe depth, a function
called from both places, not inlined).  The loads of one batch overlap instead of waiting
one at a time; nodes, probes, cuts, the memo and the order of solutions are those of
testing at once (the memo's record waits for the row's last test either way).

The source is written once per distinct plan structure to the kernel directory
(`kernel_dir`), named by its hash, so numba's on-disk cache (`cache=True`) serves later
processes, workers included, without compiling again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import stat
import sys
from pathlib import Path

import numpy as np

from e2store import bits as _bits
from e2store.errors import KernelCacheError, SolverError
from e2store.files import atomic_write_text
from e2store.solver import _kernels as K
from e2store.solver.defaults import AUTO_MIN_DEPTHS as AUTO_MIN_DEPTHS  # declared there
from e2store.solver.defaults import KERNELS as KERNELS

CHUNK = 16  # nested loops per generated function (CPython's limit is 20 blocks)
GENERATOR_VERSION = 4
# the generated code calls into `_bits` (`cttz`); its hash goes into every source, so that a
# change there makes new files instead of reusing numba's cache of stale ones
_KERNELS_HASH = hashlib.sha256(Path(_bits.__file__).read_bytes()).hexdigest()[:12]
_CLOSURE_HASH = hashlib.sha256(
    (Path(__file__).parents[1] / "query" / "_closure_kernels.py").read_bytes()).hexdigest()[:12]
_LOADED: dict[str, object] = {}


def supported(plan) -> bool:
    """Whether `plan` can have a generated kernel: up to 64 pieces and at least one free
    cell."""
    return plan.n_words == 1 and plan.n_depth > 0


def check_choice(kernel_choice: str) -> None:
    """SolverError (a ValueError) unless `kernel_choice` is one of `KERNELS`."""
    if kernel_choice not in KERNELS:
        raise SolverError(f"kernel {kernel_choice!r} (expected one of {', '.join(KERNELS)})")


def use_unrolled(kernel_choice: str, plan) -> bool:
    """Whether a complete search of `plan` runs a generated kernel: "generic" never,
    "unrolled" whenever `supported`, "auto" when supported and the plan has at least
    `AUTO_MIN_DEPTHS` free cells (compiling takes a few seconds, more than a small board's
    whole search)."""
    check_choice(kernel_choice)
    if kernel_choice == "generic" or not supported(plan):
        return False
    return kernel_choice == "unrolled" or plan.n_depth >= AUTO_MIN_DEPTHS


def kernel_dir() -> Path:
    """Where generated sources (and numba's cache of them) go: `$E2STORE_KERNEL_DIR`, else
    `kernels` in the user's cache directory; created with mode 0700 and checked before any
    use (`check_kernel_dir`), since code is imported from it."""
    env = os.environ.get("E2STORE_KERNEL_DIR")
    if env:
        path = Path(env)
    else:
        import platformdirs

        path = Path(platformdirs.user_cache_dir("e2store")) / "kernels"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    check_kernel_dir(path)
    return path


def check_kernel_dir(path: Path) -> None:
    """KernelCacheError unless `path` is a real directory owned by this user that no one
    else can write to: code is imported from it."""
    st = os.lstat(path)
    fix = ("remove it, or set E2STORE_KERNEL_DIR to a directory of your own with mode "
           "0700")
    if stat.S_ISLNK(st.st_mode):
        raise KernelCacheError(f"{path}: the kernel directory is a symbolic link ({fix})")
    if not stat.S_ISDIR(st.st_mode):
        raise KernelCacheError(f"{path}: the kernel directory is not a directory ({fix})")
    if st.st_uid != os.geteuid():
        raise KernelCacheError(f"{path}: the kernel directory belongs to user id "
                               f"{st.st_uid}, not to you ({os.geteuid()}) ({fix})")
    if st.st_mode & 0o022:
        raise KernelCacheError(f"{path}: the kernel directory is writable by others (mode "
                               f"{stat.S_IMODE(st.st_mode):o}; {fix})")


BITS, MULTI, RECORDS = "bits", "multi", "records"


def _form(plan, dep: np.ndarray, d: int) -> str:
    """How depth d walks its candidates: `bits` (each piece of the bucket once, its one
    placement from `crec`), `multi` (a bucket of its class holds a piece in two or more
    rotations: the bits, then each piece's records in the bucket), `records` (a third or
    fourth placed neighbour to check: the bucket's records, filtered)."""
    if dep[d, K.D_O3] >= 0:
        return RECORDS
    base = int(dep[d, K.D_BASE])
    return BITS if plan.simple[base:base + plan.k_col * plan.k_col].all() else MULTI


def source(plan, closure=None) -> str:
    """The generated kernel module for `plan` (see the module docstring); `closure` (an
    `e2store.solver.closure.ClosureSpec`) adds the block-closure probe after its depth."""
    dep = plan.dep.reshape(-1, K.DEP)
    nd, kc, n_p = plan.n_depth, plan.k_col, plan.n_pieces
    virtual = plan.width * plan.height * 4
    cells = [int(c) for c in plan.cells]
    depth_of = {c: d for d, c in enumerate(cells)}
    # every side a later depth reads is read by exactly one depth (the neighbour it faces):
    # as the first key colour (kept multiplied by k_col, so no multiply on the hot path), the
    # second (kept as is) or an extra check (as is)
    scaled: dict[int, bool] = {}
    for d in range(nd):
        for field, i in ((K.D_I1, dep[d, K.D_I1]), (K.D_I2, dep[d, K.D_I2]),
                         (K.D_I3, dep[d, K.D_I3]), (K.D_I4, dep[d, K.D_I4])):
            if i != virtual:
                scaled[int(i)] = field == K.D_I1
    needed: dict[int, list[int]] = {}  # depth cell -> sides read by later depths
    for i in sorted(scaled):
        if i // 4 in depth_of:
            needed.setdefault(i // 4, []).append(i % 4)
    form = [_form(plan, dep, d) for d in range(nd)]
    listed = [f != BITS for f in form]  # the placement is in a local `v<d>`
    batch = (closure is not None and STASH > 0 and 0 <= closure.memo_depth
             and closure.depth < nd - 1
             and sum(2 if form[d] == MULTI else 1
                     for d in range(closure.memo_depth, closure.depth + 1)) <= CHUNK)
    chunks: list[list[int]] = [[]]  # at most CHUNK nested loops each (multi depths: two)
    loops = 0
    for d in range(nd):
        n_loops = 2 if form[d] == MULTI else 1
        # BATCH: the memo depth to the probe depth in one chunk, which ends there
        starts = batch and d in (closure.memo_depth, closure.depth + 1) and chunks[-1]
        if loops + n_loops > CHUNK or starts:
            chunks.append([])
            loops = 0
        chunks[-1].append(d)
        loops += n_loops

    def state(d: int) -> list[str]:
        """The locals of depth d that deeper chunks take as arguments: its piece (bucket
        and bit, or the placement) and the colours later depths read."""
        own = [f"v{d}"] if listed[d] else [f"k{d}", f"p{d}"]
        return own + [f"c{cells[d]}_{side}" for side in needed.get(cells[d], ())]

    arrays = ("bmask, crec, colk, bstart, cand, rfirst, rcount, reck, shown, placed, sols, n_out,"
              " bloom, ccount, memo, stash")
    out = [f'"""Generated by e2store.solver._unrolled (version {GENERATOR_VERSION}, _bits '
           f'{_KERNELS_HASH}); do not edit."""',
           "from numba import njit, uint64",
           "from e2store.bits import cttz"]
    if plan.distinct:  # DISTINCT: placing a piece sets its bit and frees its next copy
        out += ["import numpy as np",
                f"TOG = np.array({[int(t) for t in plan.toggles()]}, dtype=np.uint64)"]
    if closure is not None:
        out.append(f"from e2store.query._closure_kernels import bloom_has, closure_key, "
                   f"word_of  # {_CLOSURE_HASH}")
        out.append("from e2store.bits import prefetch_read")
    out.append("")

    def raw(i: int) -> str:
        """The colour rank at `shown` index i as a plain number."""
        if i // 4 in depth_of:
            return f"(c{i // 4}_{i % 4} // uint64({kc}))" if scaled[i] else f"c{i // 4}_{i % 4}"
        return f"shown[{i}]"
    def digits(indices) -> str:
        """The colours at `shown` indices as one base-`k_col` number, first most
        significant (a closure or row memo key's code)."""
        code = "uint64(0)"
        for i in indices:
            code = f"({code} * uint64({kc}) + {raw(i)})"
        return code

    epilogue: list[str] = []
    for ci in range(len(chunks) - 1, -1, -1):
        ds = chunks[ci]
        outer = [name for d in range(ds[0]) for name in state(d)]

        def colour(i: int, as_key: bool = True) -> str:
            """The colour at `shown` index i in the form its reader uses."""
            if i == virtual:
                return "uint64(0)"
            if i // 4 in depth_of:
                return f"c{i // 4}_{i % 4}"
            return f"shown[{i}] * uint64({kc})" if scaled[i] and as_key else f"shown[{i}]"

        def value(d: int) -> str:
            return f"v{d}" if listed[d] else f"crec[k{d} * uint64({n_p}) + uint64(p{d})]"

        # the chunk after a batch is called from two places (the flushes): not inlined
        after_batch = batch and ds[0] == closure.depth + 1
        inline = ", inline='always'" if ci and not after_batch else ""
        packs = _packs(outer)
        out += [f"@njit(cache=True, nogil=True{inline})",
                f"def f{ci}({', '.join([arrays, 'u'] + [f't{j}' for j in range(len(packs))])}):"]
        out += [f"    ({', '.join(pack)},) = t{j}" for j, pack in enumerate(packs)]
        out += ["    one = uint64(1)", "    nodes = 0", "    found = 0"]
        ind = "    "
        u = "u"
        for d in ds:
            cell = cells[d]
            i1, i2 = int(dep[d, K.D_I1]), int(dep[d, K.D_I2])
            out.append(f"{ind}k{d} = uint64({int(dep[d, K.D_BASE])}) + {colour(i1)}"
                       f" + {colour(i2)}")
            last = d == nd - 1
            if form[d] == MULTI:
                out += [f"{ind}x{d} = bmask[k{d}] & ~{u}", f"{ind}while x{d}:"]
                ind += "    "
                out += [f"{ind}p{d} = cttz(x{d})", f"{ind}x{d} &= x{d} - one",
                        f"{ind}r{d} = k{d} * uint64({n_p}) + uint64(p{d})",
                        f"{ind}for i{d} in range(rfirst[r{d}], rfirst[r{d}] + rcount[r{d}]):"]
                ind += "    "
                out.append(f"{ind}v{d} = cand[uint64(i{d} * {K.CAND})]")

                def colour_of(side: int, d: int = d) -> str:
                    off = side + (4 if scaled[cells[d] * 4 + side] else 0)
                    return f"reck[uint64(i{d} * 8 + {off})]"
            elif form[d] == RECORDS:
                rec = f"uint64(i{d} * {K.CAND})"
                out.append(f"{ind}for i{d} in range(bstart[k{d}], bstart[k{d} + one]):")
                ind += "    "
                out += [f"{ind}v{d} = cand[{rec}]", f"{ind}p{d} = cand[{rec} + one]",
                        f"{ind}if ({u} >> uint64(p{d})) & one:", f"{ind}    continue"]
                o3, o4 = int(dep[d, K.D_O3]), int(dep[d, K.D_O4])
                if o3 >= 0:
                    for o, i in ((o3, int(dep[d, K.D_I3])), (o4, int(dep[d, K.D_I4]))):
                        out += [f"{ind}if uint64(cand[{rec} + uint64({2 + o})])"
                                f" != {colour(i, False)}:", f"{ind}    continue"]

                def colour_of(side: int, d: int = d, rec: str = rec) -> str:
                    c = f"uint64(cand[{rec} + uint64({2 + side})])"
                    return f"{c} * uint64({kc})" if scaled[cells[d] * 4 + side] else c
            else:
                out += [f"{ind}x{d} = bmask[k{d}] & ~{u}", f"{ind}while x{d}:"]
                ind += "    "
                out += [f"{ind}p{d} = cttz(x{d})", f"{ind}x{d} &= x{d} - one"]
                if not last:
                    out.append(f"{ind}q{d} = (k{d} * uint64({n_p}) + uint64(p{d})) * uint64(8)")

                def colour_of(side: int, d: int = d) -> str:
                    off = side + (4 if scaled[cells[d] * 4 + side] else 0)
                    return f"colk[q{d} + uint64({off})]"
            out.append(f"{ind}nodes += 1")
            if last:
                out += [f"{ind}found += 1", f"{ind}r = n_out[0]", f"{ind}if r < sols.shape[0]:"]
                for dd in range(nd):
                    out.append(f"{ind}    placed[{cells[dd]}] = {value(dd)}")
                out += [f"{ind}    for j in range(placed.shape[0]):",
                        f"{ind}        sols[r, j] = placed[j]",
                        f"{ind}    n_out[0] = r + 1"]
                break
            out.append(f"{ind}u{d} = {u} ^ TOG[p{d}]" if plan.distinct
                       else f"{ind}u{d} = {u} | (one << uint64(p{d}))")
            for side in needed.get(cell, ()):
                out.append(f"{ind}c{cell}_{side} = {colour_of(side)}")
            u = f"u{d}"
            if closure is not None and d == closure.memo_depth:
                # MEMO: a key whose row saw no probe pass before is cut; else watch this one
                code = digits(closure.memo_cells)
                out += [f"{ind}mk = ~{u} & uint64({closure.interior_mask})",
                        f"{ind}mc = {code}",
                        f"{ind}ms = (closure_key(mk, mc) & uint64(memo.shape[0] // 2 - 1)) "
                        f"* uint64(2)",
                        f"{ind}mc |= uint64(ccount[2]) << uint64(32)",
                        f"{ind}if memo[ms] == mk and memo[ms + one] == mc:",
                        f"{ind}    ccount[3] += 1",
                        f"{ind}    continue",
                        f"{ind}mp = ccount[0] - ccount[1]"]
                if batch:
                    out.append(f"{ind}nb = 0")
                    held = [name for dd in range(d + 1, closure.depth + 1)
                            for name in state(dd)]
                    width = 2 + len(held)
                    outer_b = [name for dd in range(d + 1) for name in state(dd)]

                    flush = functools.partial(_flush, width=width, held=held,
                                              outer=outer_b, call=f"f{ci + 1}({arrays}, ")

                epilogue = flush(ind) if batch else []
                epilogue += [f"{ind}if ccount[0] - ccount[1] == mp:",
                            f"{ind}    memo[ms] = mk",
                            f"{ind}    memo[ms + one] = mc",
                            f"{ind}    ccount[4] += 1"]
            if batch and d == closure.depth:
                # BATCH: hold the key, its word prefetched, with the state below; test the
                # held keys when `STASH` are held and when the memo depth's row ends
                code = digits([r * 4 + 3 for r in closure.row])
                out += [f"{ind}h = closure_key(~{u} & uint64({closure.interior_mask}), {code})",
                        f"{ind}prefetch_read(bloom, word_of(bloom, h))",
                        f"{ind}bb = nb * {width}",
                        f"{ind}stash[bb] = h",
                        f"{ind}stash[bb + 1] = {u}"]
                out += [f"{ind}stash[bb + {2 + i}] = uint64({name})"
                        for i, name in enumerate(held)]
                out += [f"{ind}nb += 1", f"{ind}if nb == {STASH}:"]
                out += flush(ind + "    ")
                out.append(f"{ind}    nb = 0")
                continue
            if closure is not None and d == closure.depth:
                # CLOSURE: the block below the row must take exactly the free interior pieces
                code = digits([r * 4 + 3 for r in closure.row])
                out += [f"{ind}ccount[0] += 1",
                        f"{ind}if not bloom_has(bloom, closure_key(~{u} & "
                        f"uint64({closure.interior_mask}), {code})):",
                        f"{ind}    ccount[1] += 1", f"{ind}    continue"]
            if d == ds[-1]:  # into the next chunk, this chunk's state as arguments
                passed = [f"({', '.join(pack)},)" for pack in
                          _packs(outer + [name for dd in ds for name in state(dd)])]
                out += [f"{ind}a, b = f{ci + 1}({', '.join([arrays, u] + passed)})",
                        f"{ind}nodes += a", f"{ind}found += b"]
        out += epilogue  # after the loops nested in the memo depth's body (this chunk's)
        epilogue = []
        out += ["    return nodes, found", ""]
    return "\n".join(out)


def _flush(ind: str, width: int, held: list[str], outer: list[str], call: str) -> list[str]:
    """The lines of a batching kernel (module docstring, BATCH) that test the `nb` keys held
    in `stash` (`width` words each: key, used pieces, the `held` locals) in order, and call
    `call` (the next chunk, its arrays written) below each one that passes, with the
    `outer` locals and the held ones restored under names of their own (a test inside the
    walk must not change the walk's locals)."""
    lines = [f"{ind}for bj in range(nb):",
             f"{ind}    bb = bj * {width}",
             f"{ind}    ccount[0] += 1",
             f"{ind}    if not bloom_has(bloom, stash[bb]):",
             f"{ind}        ccount[1] += 1",
             f"{ind}        continue"]
    lines += [f"{ind}    {name}_h = stash[bb + {2 + i}]" for i, name in enumerate(held)]
    passed = [f"({', '.join(pack)},)" for pack in _packs(outer + [f"{n}_h" for n in held])]
    return lines + [f"{ind}    a, b = {call}{', '.join(['stash[bb + 1]'] + passed)})",
                    f"{ind}    nodes += a", f"{ind}    found += b"]


def _packs(names: list[str], size: int = 24) -> list[list[str]]:
    """`names` in tuples of at most `size`: CPython compiles a call of more than 30
    arguments through `*args`, which numba cannot inline, so the state a chunk hands to
    the next goes as a few tuples."""
    return [names[i:i + size] for i in range(0, len(names), size)]


def kernel(plan, closure=None):
    """The generated kernel `f0` for `plan` (and `closure`, see `source`), source written
    and module loaded once per process and plan structure."""
    return load_generated(source(plan, closure), "e2k_", "f0")


def load_generated(text: str, prefix: str, entry: str):
    """Function `entry` of the generated module `text`: written to `kernel_dir` under a
    name from its hash (unless there already), imported once per process.  Shared by the
    generated kernels of the exact (here) and best-score (`best._gen`) searches."""
    name = prefix + hashlib.sha256(text.encode()).hexdigest()[:20]
    if name not in _LOADED:
        path = kernel_dir() / f"{name}.py"
        if not path.exists() or path.read_text() != text:
            atomic_write_text(path, text, mode=0o600)
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        _LOADED[name] = getattr(module, entry)
    return _LOADED[name]


def warm_up(fn, plan, colk: np.ndarray, records: tuple[np.ndarray, ...],
            bloom: np.ndarray, closure=None) -> None:
    """Compile `fn` (or load it from numba's cache) by a call that places nothing: every
    piece marked used.  `colk`, `records`: `colour_table(plan)`, `record_tables(plan)`;
    `bloom` the closure table's words (or `NO_BLOOM`)."""
    n = plan.width * plan.height
    fn(plan.bmask, plan.crec, colk, plan.bstart, plan.cand, *records,
       np.zeros((n + 1) * 4, np.uint64), np.full(n, -1, np.int64),
       np.zeros((0, n), dtype=np.int16), np.zeros(1, np.int64), bloom, np.zeros(CCOUNT, np.int64),
       np.zeros(2, np.uint64), np.zeros(stash_words(closure), np.uint64),
       np.uint64(0xFFFFFFFFFFFFFFFF))


NO_BLOOM = np.zeros(8, dtype=np.uint64)  # the closure words of a kernel without a closure
STASH = 64  # probe keys a batching kernel holds (with their words prefetched) before testing


def stash_words(closure) -> int:
    """Words of the `stash` a kernel generated with `closure` (a `ClosureSpec` or None)
    needs: `STASH` held keys of at most two words and six per row cell."""
    return 8 if closure is None else STASH * (2 + 6 * (len(closure.row) + 1))
CCOUNT = 5  # closure counters: probes, cuts, memo generation (in), memo cuts, memo records
MEMO_SLOTS = 1 << 16  # row memo entries (two words each: 8 MiB) of a kernel with one


def record_tables(plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For `multi` depths: `rfirst[k * n_pieces + p]`, `rcount[...]`: the first record of
    piece p in bucket k and how many it has there (records of one piece are adjacent), and
    `reck[i * 8 + s]`: the colour record i shows on side s, at `+ 4 + s` times `k_col`."""
    n_b = len(plan.bstart) - 1
    cand = plan.cand.reshape(-1, K.CAND)
    counts = np.diff(plan.bstart)
    bucket = np.repeat(np.arange(n_b), counts)
    key = bucket * plan.n_pieces + cand[:, 1]
    rfirst = np.zeros(n_b * plan.n_pieces, dtype=np.int64)
    rcount = np.zeros(n_b * plan.n_pieces, dtype=np.int64)
    np.add.at(rcount, key, 1)
    idx = np.arange(len(cand))
    first = np.full(n_b * plan.n_pieces, len(cand), dtype=np.int64)
    np.minimum.at(first, key, idx)
    rfirst[rcount > 0] = first[rcount > 0]
    reck = np.zeros((len(cand), 8), dtype=np.uint64)
    reck[:, :4] = cand[:, 2:6]
    reck[:, 4:] = cand[:, 2:6] * plan.k_col
    return rfirst, rcount, reck.ravel()


def colour_table(plan) -> np.ndarray:
    """`colk[(k * n_pieces + p) * 8 + s]`: the colour rank piece p of bucket k shows on side
    s (a simple bucket holds each piece once), and at `+ 4 + s` the same times `k_col` (the
    form a first key colour takes), so a depth reads a colour in one load."""
    crec = plan.crec.astype(np.int64)
    colk = np.zeros((len(crec), 8), dtype=np.uint64)
    ok = crec >= 0
    colk[ok, :4] = plan.col[crec[ok]]
    colk[ok, 4:] = plan.col[crec[ok]] * plan.k_col
    return colk.ravel()

"""Private generated kernel of the best-score search: `_kernels.best_search` written
out for one `BestPlan`, one block of code per depth, as LLVM IR with real jumps.

The generic kernel reads each depth's row of the plan (cell, the `scol` indices of the
key sides and extra sides, allowed mismatches, quota) from arrays and runs every depth
through the same loop, so the CPU's branch predictor sees one candidate loop for all 255
depths of Eternity II.  Here the plan's rows are constants of the code: depth d is its own
block, which tries its candidates, places one and jumps straight to depth d+1's block, or
undoes depth d-1's placement and jumps back to it (the way the field's generated C solvers
are written, with `goto`).  A Python source of that shape is out of reach (numba takes
minutes to type 10,000 lines, and Python has no jump), so the blocks are emitted as IR by
a numba intrinsic (`emit`) and compiled by numba's LLVM like any jitted function.

The search is the generic kernel's, candidate for candidate: same arrays, same state words
(`st`), same resumption after a node budget, so the nodes, best boards and statuses are
the generic kernel's and the pure-Python twin's (`tests/naive_best.py`).  Differences are
only in what is not computed: sides no later depth reads are not copied to `scol`, the
mismatch bookkeeping is left out of depths before the first break, the quota test out of
depths with no quota, the frame's grey and the wildcard are constants.

Signature: `best_search(lists, inner, used, st, best, mem, budget) -> nodes`: the generic
kernel's arrays less the plan's rows, the int64 ones (`MEM`) at fixed offsets of one
buffer `mem` (`memory`), so the code reaches them all from one base register plus
constants instead of reloading a dozen array pointers from the stack (+10%); every array
is told to LLVM as its own alias scope (they never overlap), which lets it keep values in
registers across the stores to the state arrays (+10%).  The module written per plan
(`source`, in `_unrolled.kernel_dir`) holds the plan's rows and `mem`'s offsets as
literals and this module's hash, so numba's on-disk cache serves later processes and a
change here writes new files.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from e2store.solver._unrolled import load_generated  # shared with the exact search

from ._kernels import (  # the state words, declared there
    EXHAUSTED,
    PERFECT,
    RUNNING,
    ST_BEST_D,
    ST_BEST_MISM,
    ST_BEST_SCORE,
    ST_D,
    ST_FULL,
    ST_STARTED,
    ST_STATUS,
)

GENERATOR_VERSION = 3
_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]

_ARGS = ("lists", "inner", "used", "st", "best", "mem")
# the int64 tables and state arrays of the generic kernel kept in `mem`, in this order
MEM = ("kstart", "kmid", "kend", "colk", "hq", "scol", "placed", "ptr", "lim", "mid", "mism",
       "hcum")
_SCOPES = tuple(a for a in _ARGS if a != "mem") + MEM  # the arrays, as alias scopes
_UNSIGNED = {"inner", "used"}
_LINE = 8  # int64s per cache line: each array of `mem` starts on one


def layout(plan) -> dict[str, tuple[int, int]]:
    """{array of `MEM`: (offset, size)} in the buffer `mem` for `plan`."""
    n, nd = plan.instance.width * plan.instance.height, int(plan.cell.size)
    nkeys = len(plan.sigs) * plan.K * plan.K
    size = {"kstart": nkeys, "kmid": nkeys, "kend": nkeys, "colk": plan.colk.size,
            "hq": plan.hq.size, "scol": 4 * (n + 2), "placed": n, "ptr": max(nd, 1),
            "lim": max(nd, 1), "mid": max(nd, 1), "mism": nd + 1, "hcum": nd + 1}
    out, at = {}, 0
    for a in MEM:
        out[a] = (at, int(size[a]))
        at += -(-int(size[a]) // _LINE) * _LINE
    return out


def memory(plan) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A zeroed buffer `mem` for `plan` and its arrays (`MEM`) as views into it: the
    generic kernel takes the views, the generated one the buffer."""
    lay = layout(plan)
    mem = np.zeros(max(o + s for o, s in lay.values()), np.int64)
    return mem, {a: mem[o:o + s] for a, (o, s) in lay.items()}


def spec(plan) -> dict:
    """The plan's rows the generated code holds as constants (plain ints and lists)."""
    nd = int(plan.cell.size)
    return {"n": nd, "cells": int(plan.instance.width * plan.instance.height), "K": int(plan.K),
            "cell": plan.cell.tolist(), "ia": plan.ia.tolist(), "ib": plan.ib.tolist(),
            "xi": plan.xi.tolist(), "xs": plan.xs.tolist(), "allow": plan.allow.tolist(),
            "qmin": plan.qmin[:nd].tolist(), "kbase": plan.kbase.tolist(),
            "jf": plan.jf.tolist(), "full": int(plan.full),
            "mem": {a: o for a, (o, _) in layout(plan).items()}}


def supported(plan) -> bool:
    """Whether `plan` can have a generated kernel: at least one free cell."""
    return plan.cell.size > 0


def source(plan) -> str:
    """The module generated for `plan`: its rows as a literal and the jitted entry point."""
    return "\n".join([
        f'"""Generated by e2store.solver.best._gen (version {GENERATOR_VERSION}, '
        f'{_HASH}); do not edit."""',
        "from numba import njit",
        "from e2store.solver.best._gen import emit",
        "",
        f"SPEC = {spec(plan)!r}",
        "_search = emit(SPEC)",
        "",
        "",
        "@njit(cache=True, nogil=True)",
        f"def best_search({', '.join(_ARGS)}, budget):",
        f"    return _search({', '.join(_ARGS)}, budget)",
        ""])


def kernel(plan):
    """The generated `best_search` for `plan`, written and loaded once per process."""
    return load_generated(source(plan), "e2b_", "best_search")


def emit(sp: dict):
    """A numba intrinsic running the search of the plan rows `sp` (`spec`): the whole
    kernel, one block per depth (module docstring)."""
    @intrinsic
    def search(typingctx, lists, inner, used, st, best, mem, budget):
        sig = types.int64(lists, inner, used, st, best, mem, budget)

        def codegen(context, builder, signature, args):
            return _Emitter(sp, context, builder, signature, args).run()

        return sig, codegen

    return search


class _Emitter:
    """Writes the kernel's IR into the intrinsic's function (see `emit`)."""

    def __init__(self, sp: dict, context, builder, signature, args):
        self.ir, self.i64 = ir, ir.IntType(64)
        self.sp, self.b = sp, builder
        self.n, self.K = sp["n"], sp["K"]
        self.frame, self.wild = 4 * sp["cells"], 4 * sp["cells"] + 4
        self.quota = any(q > 0 for q in sp["qmin"])
        self.read = {i for d in range(self.n)
                     for i in (sp["ia"][d], sp["ib"][d], *sp["xi"][d]) if 0 <= i < self.frame}
        self.data = {name: context.make_array(ty)(context, builder, value=val).data
                     for name, ty, val in zip(_ARGS, signature.args[:-1], args[:-1], strict=True)}
        for a, at in sp["mem"].items():
            self.data[a] = builder.gep(self.data["mem"], [self.const(at)])
        self.budget = args[-1]
        self.fn = builder.function
        # every array its own alias scope: the arrays never overlap, and LLVM, told so,
        # keeps values in registers across the stores to the state arrays (+10%)
        mod = builder.module
        domain = mod.add_metadata(["e2b.arrays"])
        scope = {a: mod.add_metadata([f"e2b.{a}", domain]) for a in _SCOPES}
        self.alias = {a: (mod.add_metadata([scope[a]]),
                          mod.add_metadata([scope[o] for o in _SCOPES if o != a]))
                      for a in _SCOPES}

    # -- small helpers: constants, array elements, blocks
    def const(self, v: int):
        return self.ir.Constant(self.i64, int(v))

    def _at(self, name: str, i):
        return self.b.gep(self.data[name], [i if isinstance(i, self.ir.Value) else self.const(i)])

    def _scoped(self, name: str, instr) -> None:
        own, others = self.alias[name]
        instr.set_metadata("alias.scope", own)
        instr.set_metadata("noalias", others)

    def ld(self, name: str, i):
        """Element i of array `name` as an int64."""
        v = self.b.load(self._at(name, i))
        self._scoped(name, v)
        if v.type == self.i64:
            return v
        return self.b.zext(v, self.i64) if name in _UNSIGNED else self.b.sext(v, self.i64)

    def put(self, name: str, i, v) -> None:
        ptr = self._at(name, i)
        self._scoped(name, self.b.store(
            v if ptr.type.pointee == v.type else self.b.trunc(v, ptr.type.pointee), ptr))

    def block(self, name: str):
        return self.fn.append_basic_block(name)

    def colour(self, i: int):
        """The colour at scol index i; the frame's grey and the wildcard are constants."""
        if i == self.frame:
            return self.const(0)
        if i == self.wild:
            return self.const(self.K - 1)
        return self.ld("scol", i)

    def enter(self, d: int, mm, hc) -> None:
        """Set depth d's candidate range, for `mm` mismatches and `hc` quota sides so far:
        in the state arrays (for a backtrack to d, or a resume) and in the variables
        depth d's loop starts from (`_depth`; LLVM turns them into registers, so a fresh
        entry does not wait for its own stores)."""
        b, sp = self.b, self.sp
        key = b.add(self.const(sp["kbase"][d]),
                    b.add(b.mul(self.colour(sp["ia"][d]), self.const(self.K)),
                          self.colour(sp["ib"][d])))
        start = self.ld("kstart", key)
        self.put("ptr", d, start)
        km = self.ld("kmid", key)
        end = km
        if sp["allow"][d] > 0:
            self.put("mid", d, km)
            more = b.icmp_signed(">", self.const(sp["allow"][d]), mm)
            end = b.select(more, self.ld("kend", key), km)
        self.put("lim", d, end)
        for var, v in ((self.pv, start), (self.ev, end), (self.m0v, km), (self.mmv, mm),
                       (self.hcv, hc)):
            b.store(v, var)

    # -- the kernel
    def run(self):
        """Prologue (status, first call, resume at the saved depth), the depth blocks, the
        epilogue (state words saved); returns the nodes run."""
        b, c = self.b, self.const
        self.nodes = nodes = self._var(c(0))
        self.bd, self.bs = self._var(self.ld("st", ST_BEST_D)), self._var(
            self.ld("st", ST_BEST_SCORE))
        # the candidate pointer, end, mismatch part's start, mismatches and quota sides
        # of the depth being run (registers after LLVM's mem2reg)
        self.pv, self.ev, self.m0v, self.mmv, self.hcv = (self._var(c(0)) for _ in range(5))
        self.back = self._var(c(0))  # the depth the best-board copy returns to
        self.out, ret = self.block("out"), self.block("ret")
        self.depth = [self.block(f"d{d}") for d in range(self.n)]  # entered from memory
        self.head = [self.block(f"h{d}") for d in range(self.n)]  # from the variables
        start, first, dispatch = self.block("start"), self.block("first"), self.block("dispatch")
        b.cbranch(b.icmp_signed("!=", self.ld("st", ST_STATUS), c(RUNNING)), ret, start)
        b.position_at_end(start)
        b.cbranch(b.icmp_signed("==", self.ld("st", ST_STARTED), c(0)), first, dispatch)
        b.position_at_end(first)
        self.put("st", ST_STARTED, c(1))
        self.put("st", ST_D, c(0))
        self.put("mism", 0, c(0))
        self.enter(0, c(0), self.ld("hcum", 0))
        b.branch(dispatch)
        b.position_at_end(dispatch)  # resume at the depth the last call stopped at
        switch = b.switch(self.ld("st", ST_D), self.out)
        for d in range(self.n):
            switch.add_case(c(d), self.depth[d])
        self.copy, self.kept = self.block("copy"), {}
        for d in range(self.n):
            self._depth(d)
        self._copy_best()
        b.position_at_end(self.out)
        self.put("st", ST_BEST_D, b.load(self.bd))
        self.put("st", ST_BEST_SCORE, b.load(self.bs))
        b.branch(ret)
        b.position_at_end(ret)
        return b.load(nodes)

    def _copy_best(self) -> None:
        """The one block that copies the board to `best` and returns to the depth that
        found it: written once rather than per depth (256 moves each), it halves the
        kernel's code (the copy is rare; the depth blocks then sit closer together)."""
        b, c = self.b, self.const
        b.position_at_end(self.copy)
        with cgutils.for_range(b, c(self.sp["cells"])) as r:
            self.put("best", r.index, self.ld("placed", r.index))
        back = b.switch(b.load(self.back), self.out)
        for d, blk in self.kept.items():
            back.add_case(c(d), blk)

    def _var(self, init):
        return cgutils.alloca_once_value(self.b, init)

    def _depth(self, d: int) -> None:
        """Depth d's block: stop at the budget; next candidate; place it and enter d+1, or
        undo depth d-1 and go back there."""
        b, c, sp = self.b, self.const, self.sp
        allow, qmin, xi, xs = sp["allow"][d], sp["qmin"][d], sp["xi"][d], sp["xs"][d]
        mis = allow > 0
        b.position_at_end(self.depth[d])  # a backtrack to d, a resume: state from memory
        b.store(self.ld("ptr", d), self.pv)
        b.store(self.ld("lim", d), self.ev)
        if mis:
            b.store(self.ld("mid", d), self.m0v)
        b.store(self.ld("mism", d), self.mmv)
        if self.quota:
            b.store(self.ld("hcum", d), self.hcv)
        b.branch(self.head[d])
        b.position_at_end(self.head[d])
        go, stop = self.block(f"go{d}"), self.block(f"stop{d}")
        b.cbranch(b.icmp_signed(">=", b.load(self.nodes), self.budget), stop, go)
        b.position_at_end(stop)
        self.put("st", ST_D, c(d))
        b.branch(self.out)
        b.position_at_end(go)
        end = b.load(self.ev)
        m0 = b.load(self.m0v) if mis else None
        mm0, hc0 = b.load(self.mmv), b.load(self.hcv)
        left = b.sub(c(allow), mm0) if mis else None
        need = b.sub(c(qmin), hc0) if qmin > 0 else None
        loop, body, fresh, gone = (self.block(f"{k}{d}") for k in ("loop", "body", "free", "x"))
        b.branch(loop)
        b.position_at_end(loop)
        p = b.load(self.pv)
        b.cbranch(b.icmp_signed("<", p, end), body, gone)
        b.position_at_end(body)
        q = self.ld("lists", p)
        p1 = b.add(p, c(1))
        b.store(p1, self.pv)
        b.cbranch(b.icmp_signed("!=", self.ld("used", b.ashr(q, c(2))), c(0)), loop, fresh)
        b.position_at_end(fresh)
        m = b.zext(b.icmp_signed(">", p1, m0), self.i64) if mis else c(0)
        for j in range(2):  # the third and fourth placed neighbours
            if xi[j] < 0:
                break
            want = self.colour(xi[j])
            got = self.ld("colk", b.add(b.mul(q, c(4)), c(xs[j])))
            same, diff, after = (self.block(f"{k}{d}_{j}") for k in ("same", "diff", "after"))
            b.cbranch(b.icmp_signed("==", want, got), same, diff)
            b.position_at_end(diff)
            if mis:  # one inner mismatch, when the key sides matched
                ok = b.and_(b.icmp_signed("==", m, c(0)), b.and_(
                    b.icmp_signed("!=", self.ld("inner", want), c(0)),
                    b.icmp_signed("!=", self.ld("inner", got), c(0))))
                okb = self.block(f"ok{d}_{j}")
                b.cbranch(ok, okb, loop)
                b.position_at_end(okb)
                m_diff = b.add(m, c(1))
                b.branch(after)
            else:
                b.branch(loop)
            b.position_at_end(same)
            b.branch(after)
            b.position_at_end(after)
            if mis:
                phi = b.phi(self.i64)
                phi.add_incoming(m, same)
                phi.add_incoming(m_diff, okb)
                m = phi
        if mis:
            nxt = self.block(f"left{d}")
            b.cbranch(b.icmp_signed(">", m, left), loop, nxt)
            b.position_at_end(nxt)
        if need is not None:
            nxt = self.block(f"quota{d}")
            b.cbranch(b.icmp_signed("<", self.ld("hq", q), need), loop, nxt)
            b.position_at_end(nxt)
        self._place(d, q, p1, m, mm0, hc0)
        b.position_at_end(gone)  # exhausted
        self.put("ptr", d, b.load(self.pv))
        if d == 0:
            self.put("st", ST_STATUS, c(EXHAUSTED))
            self.put("st", ST_D, c(0))
            b.branch(self.out)
        else:
            prev = sp["cell"][d - 1]
            self.put("used", b.ashr(self.ld("placed", prev), c(2)), c(0))
            self.put("placed", prev, c(-1))
            b.branch(self.depth[d - 1])

    def _place(self, d: int, q, p1, m, mm0, hc0) -> None:
        """Place `q` at depth d: the board, the sides later depths read, mismatches and
        quota, the best board; then enter depth d+1 (or, on a full board, try the next)."""
        b, c, sp = self.b, self.const, self.sp
        cell, d1 = sp["cell"][d], d + 1
        self.put("ptr", d, p1)
        b.store(b.add(b.load(self.nodes), c(1)), self.nodes)
        self.put("placed", cell, q)
        self.put("used", b.ashr(q, c(2)), c(1))
        for s in range(4):
            if cell * 4 + s in self.read:
                self.put("scol", cell * 4 + s, self.ld("colk", b.add(b.mul(q, c(4)), c(s))))
        mm = b.add(mm0, m)
        self.put("mism", d1, mm)
        hc = c(0)  # no quota: its sides are not counted
        if self.quota:
            hc = b.add(hc0, self.ld("hq", q))
            self.put("hcum", d1, hc)
        bd = b.load(self.bd)
        deep, cont = self.block(f"deep{d}"), self.block(f"cont{d}")
        here = b.block
        b.cbranch(b.icmp_signed(">=", c(d1), bd), deep, cont)
        b.position_at_end(deep)
        score = b.sub(c(sp["jf"][d1]), mm)
        keep, kept = self.block(f"keep{d}"), self.block(f"kept{d}")
        b.cbranch(b.or_(b.icmp_signed(">", c(d1), bd),
                        b.icmp_signed(">", score, b.load(self.bs))), keep, kept)
        b.position_at_end(keep)
        b.store(c(d1), self.bd)
        b.store(score, self.bs)
        self.put("st", ST_BEST_MISM, mm)
        b.store(c(d), self.back)
        self.kept[d] = kept
        b.branch(self.copy)
        b.position_at_end(kept)  # reached from the copy too: values read back from memory
        if d1 < self.n:
            mmk, hck = self.ld("mism", d1), self.ld("hcum", d1) if self.quota else hc
            b.branch(cont)
            b.position_at_end(cont)
            mmp, hcp = b.phi(self.i64), b.phi(self.i64)
            for blk, a, h in ((here, mm, hc), (kept, mmk, hck)):
                mmp.add_incoming(a, blk)
                hcp.add_incoming(h, blk)
            self.enter(d1, mmp, hcp)
            b.branch(self.head[d1])
            return
        score = b.sub(c(sp["jf"][d1]), self.ld("mism", d1))
        self.put("st", ST_FULL, b.add(self.ld("st", ST_FULL), c(1)))
        perfect = self.block("perfect")
        b.cbranch(b.icmp_signed("==", score, c(sp["full"])), perfect, cont)
        b.position_at_end(perfect)
        self.put("st", ST_STATUS, c(PERFECT))
        self.put("st", ST_D, c(d1))
        b.branch(self.out)
        b.position_at_end(cont)  # a full board: take it back, try the next candidate
        self.put("used", b.ashr(self.ld("placed", cell), c(2)), c(0))
        self.put("placed", cell, c(-1))
        b.branch(self.depth[d])

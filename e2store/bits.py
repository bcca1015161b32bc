"""Bit intrinsics shared by the numba kernels (`_kernels`, `_arm_kernels`, `_solver_kernels`
and the generated ones of `_unrolled`): LLVM `ctpop` and `cttz` on a uint64, one machine
instruction each where the CPU has it; and, for kernels that write a large table from
several threads (the closure filter), `atomic_or` on a uint64 array element; and
`prefetch_write` / `prefetch_read`, hints with no effect on results.  Checked against
Python's integers in tests/test_bits.py."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def ctpop(typingctx, x):
    """Set bits of a uint64 (LLVM `ctpop`), as int64."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic("llvm.ctpop", [i64], ir.FunctionType(i64, [i64]))
        return builder.call(fn, [args[0]])

    return sig, codegen


@intrinsic
def cttz(typingctx, x):
    """Count trailing zeros of a non-zero uint64 (LLVM `cttz`), as int64."""
    sig = types.int64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = builder.module.declare_intrinsic(
            "llvm.cttz", [i64], ir.FunctionType(i64, [i64, ir.IntType(1)]))
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen


def _element(context, builder, aryty, ary_value, index):
    """LLVM pointer to `ary[index]` (no wraparound, no bounds check)."""
    ary = context.make_array(aryty)(context, builder, value=ary_value)
    return cgutils.get_item_pointer(context, builder, aryty, ary, [index], wraparound=False)


@intrinsic
def atomic_or(typingctx, arr, index, value):
    """`arr[index] |= value` as one atomic read-modify-write (LLVM `atomicrmw or`), so
    threads setting bits in the same uint64 array never lose each other's bits.  `index`
    must be inside `arr`."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint64
            and isinstance(index, types.Integer) and value == types.uint64):
        return None
    sig = types.void(arr, index, value)

    def codegen(context, builder, signature, args):
        ptr = _element(context, builder, signature.args[0], args[0], args[1])
        builder.atomic_rmw("or", ptr, args[2], "monotonic")
        return context.get_dummy_value()

    return sig, codegen


def _prefetch(arr, index, rw: int):
    """The signature and codegen of a prefetch of `arr[index]` (`rw` 1: to be written, 0:
    to be read), locality 3 (keep in every cache level), data cache."""
    if not isinstance(arr, types.Array) or not isinstance(index, types.Integer):
        return None
    sig = types.void(arr, index)

    def codegen(context, builder, signature, args):
        ptr = _element(context, builder, signature.args[0], args[0], args[1])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, rw), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch_write(typingctx, arr, index):
    """Ask the CPU to bring `arr[index]`'s cache line in, to be written (LLVM `prefetch`).
    Only a hint: it never faults and changes no result.  `index` must be inside `arr`."""
    return _prefetch(arr, index, 1)


@intrinsic
def prefetch_read(typingctx, arr, index):
    """Ask the CPU to bring `arr[index]`'s cache line in, to be read (LLVM `prefetch`): a
    search that will test a word of a large table later issues this first and does other
    work meanwhile.  Only a hint, like `prefetch_write`."""
    return _prefetch(arr, index, 0)

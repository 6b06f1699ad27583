"""``tensorplug demo``: a tour of tensors, views, promotion, plugins and dispatch."""

from __future__ import annotations

import argparse

import tensorplug as tp


def _section(title):
    print(f"\n== {title} " + "=" * max(0, 60 - len(title)))


def tour():
    _section("tensors")
    x = tp.arange(12, dtype=tp.float32).reshape(3, 4)
    print("x =", x)
    print("x.shape", x.shape, "x.stride()", x.stride(), "x.dtype", x.dtype, "x.device", x.device)
    print("x * 2 + 1 =", x * 2 + 1)
    print("x @ x.T =", x @ x.T)
    print("x.sum(dim=1) =", x.sum(dim=1))

    _section("views share storage")
    v = x.T
    print("v = x.T: shape", v.shape, "stride", v.stride(), "contiguous", v.is_contiguous())
    row = x[1]
    row.add_(100)
    print("after x[1].add_(100): x =", x)
    print("version counter shared by x and its views:", x._version, row._version)

    _section("type promotion (PyTorch's rules)")
    i32 = tp.tensor([1, 2, 3], dtype=tp.int32)
    for expr, val in [("int32 tensor + 2.5", i32 + 2.5), ("int32 tensor + 2", i32 + 2),
                      ("int64 tensor + 2", tp.tensor([1, 2]) + 2),
                      ("int32 / int32", i32 / i32 if hasattr(tp.Tensor, "__truediv__") else None),
                      ("uint8 + int8", tp.tensor([1], dtype=tp.uint8) + tp.tensor([1], dtype=tp.int8)),
                      ("float16 + bfloat16", tp.ones(1, dtype=tp.float16) + tp.ones(1, dtype=tp.bfloat16))]:
        if val is not None:
            print(f"  {expr:<22} -> {val.dtype}")

    _section("plugins")
    for p in tp.plugins.list():
        print(f"  {p.name:<10} {p.state:<9} version={p.version} backends={p.backends} keys={p.keys} "
              f"kernels={p.kernel_count}")

    _section("dispatch table of add.Tensor")
    for key, prov, owner in tp.ops.tensorplug.add.Tensor.dispatch_table():
        print(f"  {key:<22} {prov:<12} {owner}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="tensorplug demo", description=__doc__)
    ap.parse_args(argv)
    tour()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

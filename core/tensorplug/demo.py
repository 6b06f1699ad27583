"""``tensorplug demo``: train a classifier on scikit-learn's bundled digits data set.

Written only against tensorplug's public API, as a user would write it (it is
also ``examples/train_digits.py``). The data (1,797 8x8 images of digits)
ships inside scikit-learn, installed by the ``examples`` extra; nothing is
downloaded.

    tensorplug demo                       # MLP, 20 epochs, on the cpu backend
    tensorplug demo --model cnn --epochs 10
    tensorplug demo --save digits.safetensors
    tensorplug demo --load digits.safetensors   # evaluate a checkpoint
    tensorplug demo --tour                # tensors, views, promotion, plugins, dispatch
    tensorplug demo --profile             # with tensorplug-profiler: top ops and a Chrome trace
    tensorplug demo --quantize int8       # with tensorplug-quantize: the trained model quantized
    tensorplug demo --ddp 2               # with tensorplug-distributed: 2 processes, DistributedDataParallel
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib
import io
import sys
import time

import tensorplug as tp
from tensorplug import nn
from tensorplug.nn import functional as F


def load_digits(seed, device, test_fraction=0.2):
    """(x_train, y_train, x_test, y_test) as tensors; pixels scaled to [0, 1], a seeded split."""
    from sklearn.datasets import load_digits as sk_load_digits  # lazy: optional, the 'examples' extra
    data = sk_load_digits()
    x = tp.tensor(data.images, dtype=tp.float32) / 16.0
    y = tp.tensor(data.target, dtype=tp.int64)
    order = tp.randperm(len(y), generator=tp.Generator().manual_seed(seed))
    n_test = int(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train].to(device), y[train].to(device), x[test].to(device), y[test].to(device)


def make_model(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(),
                             nn.Linear(64, 10))
    if kind == "cnn":
        return nn.Sequential(
            _AddChannel(),
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(32 * 2 * 2, 10))
    raise SystemExit(f"unknown model {kind!r}: choose mlp or cnn")


class _AddChannel(nn.Module):
    """(N, 8, 8) images -> (N, 1, 8, 8): one input channel for Conv2d."""

    def forward(self, x):
        return x.unsqueeze(1)


def evaluate(model, x, y, batch_size=512, amp=None):
    model.eval()
    correct, total_loss = 0, 0.0
    with tp.no_grad():
        for i in range(0, len(y), batch_size):
            with amp() if amp is not None else contextlib.nullcontext():
                logits = model(x[i:i + batch_size])
            total_loss += F.cross_entropy(logits, y[i:i + batch_size], reduction="sum").item()
            correct += (logits.argmax(1) == y[i:i + batch_size]).sum().item()
    model.train()
    return total_loss / len(y), correct / len(y)


def _require_examples_extra():
    """Exit with a one-line message (no traceback) when scikit-learn or tqdm is missing."""
    missing = []
    for module, why in (("sklearn", "scikit-learn, whose digits data set the demo trains on"),
                        ("tqdm", "tqdm, for the progress bars")):
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(why)
    if missing:
        sys.exit("tensorplug demo: training needs " + " and ".join(missing)
                 + ", from the examples extra: pip install 'tensorplug[examples]'")


def train(args):
    _require_examples_extra()
    from tqdm import tqdm  # lazy: optional, the 'examples' extra
    tp.manual_seed(args.seed)
    ddp = args.ddp_worker
    rank, world = (tp.distributed.get_rank(), tp.distributed.get_world_size()) if ddp else (0, 1)
    say = print if rank == 0 else (lambda *a, **k: None)
    x_train, y_train, x_test, y_test = load_digits(args.seed, args.device)
    model = make_model(args.model).to(args.device)
    if args.load:
        model.load_state_dict(tp.load(args.load))
        loss, acc = evaluate(model, x_test, y_test)
        say(f"loaded {args.load}: test loss {loss:.4f}, test accuracy {acc:.2%}")
        return acc
    plain = model
    if ddp:  # every rank starts from rank 0's weights and averages gradients in backward
        model = nn.parallel.DistributedDataParallel(model)
    opt = tp.optim.Adam(model.parameters(), lr=args.lr)
    amp, scaler = _mixed_precision(args)
    dataset = tp.utils.data.TensorDataset(x_train, y_train)
    sampler = tp.utils.data.DistributedSampler(dataset, seed=args.seed) if ddp else None
    loader = tp.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler,
                                      generator=tp.Generator().manual_seed(args.seed))
    say(f"training a {args.model.upper()} on {len(y_train)} digits ({len(y_test)} held out) on "
        f"{args.device}; {sum(p.numel() for p in model.parameters())} parameters")
    if ddp:
        say(f"data parallel: {world} processes, each training on its shard of {len(sampler)} digits per epoch "
            f"(batches of {args.batch_size} per process), gradients averaged by allreduce")
    step = _training_step(model, opt, amp, scaler)
    if args.compile:
        step = _compiled(step)
    start = time.perf_counter()
    acc = 0.0
    for epoch in range(1, args.epochs + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        running, seen = 0.0, 0
        bar = tqdm(loader, desc=f"epoch {epoch:2d}/{args.epochs}", leave=False, file=sys.stdout,
                   disable=rank != 0 or (not sys.stdout.isatty() and not args.progress))
        for xb, yb in bar:
            loss = step(xb, yb)
            running += loss.item() * len(yb)
            seen += len(yb)
            bar.set_postfix(loss=f"{running / seen:.4f}")
        test_loss, acc = evaluate(model, x_test, y_test, amp=amp)
        per_rank = ""
        if ddp:
            losses = [None] * world
            tp.distributed.all_gather_object(losses, running / seen)
            running, seen = sum(losses), world
            per_rank = " (per rank: " + ", ".join(f"{v:.4f}" for v in losses) + ")"
        say(f"epoch {epoch:2d}: train loss {running / seen:.4f}{per_rank}  test loss {test_loss:.4f}  "
            f"test accuracy {acc:.2%}")
    say(f"done in {time.perf_counter() - start:.1f} s: test accuracy {acc:.2%}")
    if args.compile:
        _step_times(args, model.state_dict(), x_train[:args.batch_size], y_train[:args.batch_size])
    if args.quantize and rank == 0:
        _quantized(plain, x_test, y_test, args.quantize)
    if args.save and rank == 0:   # the plain model's weights: `--load` reads them without --ddp
        tp.save(plain.state_dict(), args.save)
        say(f"saved the weights to {args.save}")
    return acc


def _training_step(model, opt, amp, scaler):
    """One optimizer step on a batch; returns the loss (the function ``--compile`` compiles)."""
    def step(xb, yb):
        with amp() if amp is not None else contextlib.nullcontext():
            loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        if scaler is not None:   # float16: scale the loss so small gradients do not flush to zero
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss
    return step


def _compiled(fn):
    try:
        return tp.compile(fn)  # provided by the tensorplug-compile plugin
    except AttributeError as e:
        raise SystemExit(f"tensorplug demo --compile: {e}") from None


def _step_times(args, weights, xb, yb, steps=30):
    """Milliseconds per training step, eager and compiled, on copies of the trained model."""
    times = {}
    for kind in ("eager", "compiled"):
        model = make_model(args.model).to(args.device)
        model.load_state_dict(weights)
        opt = tp.optim.Adam(model.parameters(), lr=args.lr)
        amp, scaler = _mixed_precision(args)
        step = _training_step(model, opt, amp, scaler)
        if kind == "compiled":
            step = _compiled(step)
        for _ in range(4):  # the compiled step replays from its third call
            step(xb, yb).item()
        t0 = time.perf_counter()
        for _ in range(steps):
            step(xb, yb)
        step(xb, yb).item()
        times[kind] = (time.perf_counter() - t0) / (steps + 1) * 1e3
    print(f"step time (batch {len(yb)}): compiled {times['compiled']:.2f} ms, eager {times['eager']:.2f} ms "
          f"({times['eager'] / times['compiled']:.2f}x)")
    return times


def _mixed_precision(args):
    """``(region, scaler)`` for ``--amp``: a factory of autocast regions, and a GradScaler for float16."""
    if args.amp is None:
        return None, None
    try:
        autocast = tp.autocast  # provided by the tensorplug-autocast plugin
    except AttributeError as e:
        raise SystemExit(str(e)) from None
    dtype = {"bf16": tp.bfloat16, "fp16": tp.float16}[args.amp]
    device_type = tp.device(args.device).type
    print(f"mixed precision: autocast to {dtype} on {device_type}" + (" with a GradScaler" if args.amp == "fp16" else ""))
    scaler = tp.amp.GradScaler(device_type) if args.amp == "fp16" else None
    return (lambda: autocast(device_type, dtype=dtype)), scaler


QUANTIZE_CHOICES = ("int8", "int8-weight", "int4-weight")


def _model_bytes(model):
    buf = io.BytesIO()
    tp.save(model.state_dict(), buf)
    return buf.tell()


def _inference_ms(model, x):
    best = float("inf")
    with tp.no_grad():
        model(x)
        for _ in range(5):
            t0 = time.perf_counter()
            model(x)
            best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _quantized(model, x_test, y_test, kind):
    """Quantize the trained ``model`` (``--quantize``) and print accuracy, bytes and inference time of both."""
    try:
        quant = tp.quantization  # the names come from the tensorplug-quantize plugin
        config = {"int8": quant.Int8DynamicActivationInt8Weight, "int8-weight": quant.Int8WeightOnly,
                  "int4-weight": quant.Int4WeightOnly}[kind]()
    except AttributeError as e:
        raise SystemExit(str(e)) from None
    model = model.cpu().eval()
    x, y = x_test.cpu(), y_test.cpu()
    qmodel = copy.deepcopy(model)
    quant.quantize_(qmodel, config)
    print(f"quantized with {config!r}:")
    print(f"{'model':<12}{'test accuracy':>15}{'bytes':>10}{'inference ms':>14}")
    for name, m in (("float32", model), (kind, qmodel)):
        _, acc = evaluate(m, x, y)
        print(f"{name:<12}{acc:>15.2%}{_model_bytes(m):>10}{_inference_ms(m, x):>14.3f}")
    model.train()


def _section(title):
    print(f"\n== {title} " + "=" * max(0, 60 - len(title)))


def tour():
    """Tensors, views, promotion, the plugin listing and a dispatch table."""
    _section("tensors")
    x = tp.arange(12, dtype=tp.float32).reshape(3, 4)
    print("x =", x)
    print("x.shape", x.shape, "x.stride()", x.stride(), "x.dtype", x.dtype, "x.device", x.device)
    print("x @ x.T =", x @ x.T)
    _section("views share storage")
    row = x[1]
    row.add_(100)
    print("after x[1].add_(100): x =", x)
    print("version counter shared by x and its views:", x._version, row._version)
    _section("type promotion (PyTorch's rules)")
    i32 = tp.tensor([1, 2, 3], dtype=tp.int32)
    for expr, val in [("int32 tensor + 2.5", i32 + 2.5), ("int32 tensor + 2", i32 + 2),
                      ("int32 / int32", i32 / i32),
                      ("uint8 + int8", tp.tensor([1], dtype=tp.uint8) + tp.tensor([1], dtype=tp.int8)),
                      ("float16 + bfloat16", tp.ones(1, dtype=tp.float16) + tp.ones(1, dtype=tp.bfloat16))]:
        print(f"  {expr:<22} -> {val.dtype}")
    _section("plugins")
    for p in tp.plugins.list():
        print(f"  {p.name:<10} {p.state:<9} version={p.version} backends={p.backends} keys={p.keys} "
              f"kernels={p.kernel_count}")
    _section("dispatch table of mul.Tensor")
    for key, prov, owner in tp.ops.tensorplug.mul.Tensor.dispatch_table():
        print(f"  {key:<22} {prov:<12} {owner}")


def parser():
    ap = argparse.ArgumentParser(prog="tensorplug demo", description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", metavar="PATH", help="write the trained weights (safetensors)")
    ap.add_argument("--load", metavar="PATH", help="evaluate saved weights instead of training")
    ap.add_argument("--progress", action="store_true", help="show progress bars even when not on a terminal")
    ap.add_argument("--tour", action="store_true", help="show tensors, promotion, plugins and dispatch instead")
    ap.add_argument("--amp", choices=("bf16", "fp16"), help="train in mixed precision under autocast (needs "
                    "tensorplug-autocast); fp16 adds a GradScaler")
    ap.add_argument("--compile", action="store_true", help="train with the step compiled by tensorplug.compile "
                    "(needs tensorplug-compile) and compare its step time with eager")
    ap.add_argument("--quantize", choices=QUANTIZE_CHOICES, help="after training, quantize the model (needs "
                    "tensorplug-quantize) and compare accuracy, bytes and inference time")
    ap.add_argument("--ddp", type=int, metavar="N", help="train with N processes under DistributedDataParallel "
                    "(needs tensorplug-distributed[mpi]; rank 0 prints)")
    ap.add_argument("--ddp-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--profile", nargs="?", const="tensorplug-demo-trace.json", metavar="TRACE",
                    help="profile the run (needs tensorplug-profiler): print the top ops, write a Chrome "
                         "trace to TRACE (default tensorplug-demo-trace.json)")
    return ap


def _check_device(name):
    """Exit with the backend's own message when ``--device`` cannot be used (no plugin, no GPU, no cupy)."""
    try:
        tp.zeros(1, device=name)
    except (RuntimeError, ValueError) as e:
        raise SystemExit(f"tensorplug demo: --device {name}: {e}") from None


def _launch_ddp(args, argv):
    """``--ddp N``: start N processes running this same demo (each joins the process group)."""
    if args.compile or args.profile or args.tour:
        raise SystemExit("tensorplug demo: --ddp does not combine with --compile, --profile or --tour")
    if args.ddp < 1:
        raise SystemExit("tensorplug demo: --ddp needs a number of processes of at least 1")
    dist = tp.distributed
    try:
        launcher = dist.run  # provided by the tensorplug-distributed plugin
    except AttributeError as e:
        raise SystemExit(f"tensorplug demo --ddp: {e}") from None
    if not dist.is_available():
        raise SystemExit("tensorplug demo --ddp: MPI is not available: pip install 'tensorplug-distributed[mpi]'")
    return launcher.main(["-n", str(args.ddp), "-m", "tensorplug", "demo", *argv, "--ddp-worker"])


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    if args.ddp and not args.ddp_worker:
        return _launch_ddp(args, argv)
    if args.tour:
        tour()
        return 0
    _check_device(args.device)
    if args.ddp_worker:
        tp.distributed.init_process_group()
    if args.profile:
        try:
            profiler = tp.profiler  # provided by the tensorplug-profiler plugin
        except AttributeError as e:
            raise SystemExit(str(e)) from None
        with profiler.profile(record_shapes=True) as prof:
            train(args)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))
        prof.export_chrome_trace(args.profile)
        print(f"wrote a Chrome trace to {args.profile} (open it in ui.perfetto.dev or chrome://tracing)")
        return 0
    train(args)
    if args.ddp_worker:
        tp.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Random numbers: the Generator, the random primitives and the random factories.

A :class:`Generator` holds a seed and a host PCG64 stream (numpy's), so its
state can be saved, restored and compared on any device. Every backend has a
default generator per device type, created on first use; random ops take an
optional ``generator=`` and otherwise draw from the default one of their
tensor's device. Backends read a generator's stream with :func:`host_rng`.

The primitives (kernels come from backends) fill a tensor in place:
``uniform_``, ``normal_``, ``bernoulli_.float``, ``random_.from``, ``exponential_``,
``geometric_``, ``cauchy_``, ``log_normal_``, plus the
out-of-place ``bernoulli`` (probabilities from the tensor), ``multinomial``
and the factory ``randperm``. Their checks (ranges, dtypes, generator
device) live here so every backend raises PyTorch's errors. ``rand``,
``randn``, ``randint``, ``normal`` and the ``*_like`` factories are built on
them.
"""

from __future__ import annotations

import numbers
import os
import warnings

import numpy as np

from .. import dtypes as _dt
from ..backend import BACKENDS, backend_for, canonical_device
from ..device import device as _device
from ..tensor import Tensor, OBSERVER as _OBSERVER


def _finfo(npdt):
    """numpy's finfo, or ml_dtypes' for its types (bfloat16), imported only for those."""
    if npdt.kind == "f":
        return np.finfo(npdt)
    import ml_dtypes  # lazy: only the types numpy lacks (bfloat16) need it

    return ml_dtypes.finfo(npdt)
from ._lib import SEEDED, defop, public, attach
from .promotion import _pt_name, broadcast_shapes
from . import factories as _f
from . import memory as _mem
from ..autograd.grad_mode import no_grad
from .comparison import with_zero_grad

DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so fresh processes start alike
_U64 = 1 << 64


def _seed_value(seed):
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64


_STATE_BYTES = 16 + 16 + 1 + 4 + 8  # PCG64 state, increment, has_uint32, uinteger, initial seed


class Generator:
    """A random number generator for one device: ``tensorplug.Generator(device="cpu")``.

    Pass it to random ops as ``generator=`` to get a stream independent of
    the global one. ``manual_seed(s)`` makes it reproducible; ``get_state()``
    and ``set_state()`` save and restore its position (a uint8 tensor).
    """

    __slots__ = ("device", "_seed", "_rng", "__weakref__")

    def __init__(self, device="cpu"):
        dev = _device(device)
        # the host stream needs no backend; other device types must have one
        self.device = _device("cpu") if dev.type == "cpu" else canonical_device(dev)
        self._reseed(DEFAULT_SEED)

    def manual_seed(self, seed):
        """Reset the stream from ``seed`` (an int; negative seeds wrap modulo 2**64). Returns self."""
        obs = _OBSERVER[0]
        if obs is not None:  # a tracer replays the reseeding with the kernels that draw after it
            obs.effect(Generator._reseed, self, seed)
        return self._reseed(seed)

    def _reseed(self, seed):
        self._seed = _seed_value(seed)
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed this generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator's state as a 1-D uint8 CPU tensor (restore it with :meth:`set_state`)."""
        obs = _OBSERVER[0]
        if obs is not None:
            obs.host_read(None, "a generator's get_state()")
        st = self._rng.bit_generator.state
        raw = (st["state"]["state"].to_bytes(16, "little") + st["state"]["inc"].to_bytes(16, "little")
               + bytes([st["has_uint32"]]) + st["uinteger"].to_bytes(4, "little")
               + self._seed.to_bytes(8, "little"))
        return _f.from_host(np.frombuffer(raw, dtype=np.uint8).copy(), _dt.uint8, "cpu")

    def set_state(self, new_state):
        """Restore a state returned by :meth:`get_state`. Returns self."""
        if not isinstance(new_state, Tensor) or new_state.dtype is not _dt.uint8:
            raise TypeError("RNG state must be a tensorplug.uint8 tensor")
        raw = bytes(new_state._host("a generator's set_state()").reshape(-1).tobytes())
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a generator state of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {len(raw)}")
        bitgen = np.random.PCG64()
        bitgen.state = {"bit_generator": "PCG64",
                        "state": {"state": int.from_bytes(raw[0:16], "little"),
                                  "inc": int.from_bytes(raw[16:32], "little")},
                        "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:37], "little")}
        self._rng = np.random.Generator(bitgen)
        self._seed = int.from_bytes(raw[37:45], "little")
        return self

    def __repr__(self):
        return f"<tensorplug.Generator device='{self.device}' initial_seed={self._seed}>"


_DEFAULTS: dict = {}  # device type -> default Generator
_global_seed = [DEFAULT_SEED]


def default_generator_for(device_type):
    """The default generator of a device type (created on first use, seeded like the others)."""
    g = _DEFAULTS.get(device_type)
    if g is None:
        g = _DEFAULTS[device_type] = Generator(device_type)._reseed(_global_seed[0])
    return g


default_generator = default_generator_for("cpu")


def host_rng(generator, device_type="cpu"):
    """The numpy ``Generator`` to draw from: ``generator``'s, or the device type's default one."""
    if generator is None:
        generator = default_generator_for(device_type)
    return generator._rng


def manual_seed(seed):
    """Seed every backend's default generator (and the backends' own state); returns the CPU default.

    Like ``torch.manual_seed``, ``seed`` goes through ``int()`` first (``manual_seed(1.5)`` seeds 1).
    """
    s = _seed_value(int(seed))
    obs = _OBSERVER[0]
    if obs is not None:  # a tracer replays the reseeding with the kernels that draw after it
        obs.effect(_seed_all, s)
    _seed_all(s)
    return default_generator


def _seed_all(s):
    _global_seed[0] = s
    for g in _DEFAULTS.values():
        g._reseed(s)
    for b in BACKENDS.values():
        b.manual_seed(s)


def seed():
    """Seed every default generator from the operating system's entropy; returns the seed."""
    s = int.from_bytes(os.urandom(8), "little")
    manual_seed(s)
    return s


def initial_seed():
    """The initial seed of the default CPU generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default CPU generator's state (a uint8 tensor)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default CPU generator's state from :func:`get_rng_state`."""
    default_generator.set_state(new_state)


for _name, _fn in {"Generator": Generator, "manual_seed": manual_seed, "seed": seed,
                   "initial_seed": initial_seed, "get_rng_state": get_rng_state,
                   "set_rng_state": set_rng_state, "default_generator": default_generator}.items():
    public(_name, _fn)


# -- checks -------------------------------------------------------------------------------
def _check_generator(opname, self, generator):
    if generator is None:
        return
    if generator.__class__ is not Generator:
        raise TypeError(f"{opname}(): argument 'generator' must be tensorplug.Generator, "
                        f"not {type(generator).__name__}")
    if generator.device.type != self._device.type:
        raise RuntimeError(f"Expected a '{self._device.type}' device type for generator but found "
                           f"'{generator.device.type}'")


def _require_float(opname, dtype):
    if not dtype.is_floating_point:
        raise NotImplementedError(f'"{opname}" not implemented for \'{_pt_name(dtype)}\'')


def _fmt(x):
    return f"{x:g}"


def _check_uniform(self, from_=0.0, to=1.0, generator=None):
    _check_generator("uniform_", self, generator)
    _require_float("uniform_", self._dtype)
    limit = float(_finfo(self._dtype.np).max)
    for name, v in (("from", from_), ("to", to)):
        if not -limit <= v <= limit:
            raise RuntimeError(f"{name} is out of bounds for {_dt.c_type_name(self._dtype)}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_fmt(from_)} > "
                           f"to={_fmt(to)}")
    if to - from_ > limit:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_pt_name(self._dtype)}>::max(), "
                           f"but found to={_fmt(to)} and from={_fmt(from_)} which result in to-from to exceed "
                           "the limit")


def _check_normal(self, mean=0.0, std=1.0, generator=None):
    _check_generator("normal_", self, generator)
    _require_float("normal_", self._dtype)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def _continuous(self, name, c_type=False):
    d = self._dtype
    if not d.is_floating_point:
        kind = _dt.c_type_name(d) if c_type else _dt.scalar_type_name(d)
        raise RuntimeError(f"{name} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {kind}")


def _check_exponential(self, lambd=1.0, generator=None):
    _check_generator("exponential_", self, generator)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    _continuous(self, "Exponential")


def _check_geometric(self, p, generator=None):
    _check_generator("geometric_", self, generator)
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    if self._dtype is _dt.bool or self._dtype.is_complex:
        raise NotImplementedError(f'"geometric_cpu" not implemented for \'{_pt_name(self._dtype)}\'')


def _check_cauchy(self, median=0.0, sigma=1.0, generator=None):
    _check_generator("cauchy_", self, generator)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    _continuous(self, "Cauchy", c_type=True)


def _check_log_normal(self, mean=1.0, std=2.0, generator=None):
    _check_generator("log_normal_", self, generator)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    _require_float("log_normal_cpu", self._dtype)


def _check_bernoulli_p(self, p=0.5, generator=None):
    _check_generator("bernoulli_", self, generator)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")


def _check_bernoulli(self, generator=None):
    _check_generator("bernoulli", self, generator)
    _require_float("bernoulli", self._dtype)
    a = self._check_values()
    if a.size and not np.all((a >= 0) & (a <= 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


def random_bounds(dtype, from_, to):
    """The inclusive range ``[low, high]`` ``random_(from, to)`` draws from for ``dtype``."""
    if dtype.is_floating_point:
        return from_, (1 << (_finfo(dtype.np).nmant + 1)) if to is None else to - 1
    if dtype is _dt.bool:
        return from_, 1 if to is None else to - 1
    return from_, int(np.iinfo(dtype.np).max) if to is None else to - 1


def _check_random(self, from_, to=None, generator=None):
    _check_generator("random_", self, generator)
    for v in (from_, to):
        if v is not None and not -(1 << 63) <= v < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
    if to is not None and from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    d = self._dtype
    cname = _dt.c_type_name(d)
    low, high = random_bounds(d, from_, to)
    if d.is_floating_point:
        digits = _finfo(d.np).nmant + 1
        for name, v in (("from", low), ("to - 1", high)):
            if not -(1 << digits) <= v <= (1 << digits):
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations "
                              f"{cname} can support discrete uniform distribution only within this range.",
                              UserWarning, stacklevel=4)
        return
    lo, hi = (0, 1) if d is _dt.bool else (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max))
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {cname}")
    if not lo <= high <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {cname}")


def _check_multinomial(self, num_samples, replacement=False, generator=None):
    _check_generator("multinomial", self, generator)
    if len(self._shape) not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_pt_name(self._dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = self._shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    a = self._check_values().astype(np.float64)
    if a.size:
        if not np.all(np.isfinite(a) & (a >= 0)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if np.any(a.sum(axis=-1) <= 0):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _check_randperm(n, generator=None, dtype=None, device=None):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if generator is not None:
        if generator.__class__ is not Generator:
            raise TypeError(f"randperm(): argument 'generator' must be tensorplug.Generator, "
                            f"not {type(generator).__name__}")
        dev = device or _f._dev(None)
        if generator.device.type != dev.type:
            raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                               f"'{generator.device.type}'")


# -- primitives ---------------------------------------------------------------------------
uniform_ = defop("uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)",
                 check=_check_uniform, tags=SEEDED)
normal_ = defop("normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)",
                check=_check_normal, tags=SEEDED)
bernoulli_ = defop("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)",
                   check=_check_bernoulli_p, tags=SEEDED)
bernoulli = defop("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", check=_check_bernoulli, tags=SEEDED)
random_from_ = defop("random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)",
                     check=_check_random, tags=SEEDED)
multinomial = defop("multinomial(Tensor self, int num_samples, bool replacement=False, *, "
                    "Generator? generator=None) -> Tensor", check=_check_multinomial, tags=SEEDED)
exponential_ = defop("exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)",
                     check=_check_exponential, tags=SEEDED)
geometric_ = defop("geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)",
                   check=_check_geometric, tags=SEEDED)
cauchy_ = defop("cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) -> Tensor(a!)",
                check=_check_cauchy, tags=SEEDED)
log_normal_ = defop("log_normal_(Tensor(a!) self, float mean=1, float std=2, *, Generator? generator=None)"
                    " -> Tensor(a!)", check=_check_log_normal, tags=SEEDED)
randperm = defop("randperm(SymInt n, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None)"
                 " -> Tensor", check=_check_randperm, tags=SEEDED)

_random_from_positional = random_from_._op.positional


_NO_TO = object()


def random_(self, from_=None, to=_NO_TO, *, generator=None):
    """``random_()``: integers over the dtype's range; ``random_(to)``: ``[0, to)``;
    ``random_(from, to)``: ``[from, to)``, with ``to=None`` meaning up to the dtype's maximum."""
    if to is _NO_TO:
        from_, to = (0, None) if from_ is None else (0, from_)
    elif from_ is None:
        from_ = 0
    return _random_from_positional(self, from_, to, generator)


def _bernoulli_method(self, p=None, *, generator=None):
    """0/1 draws shaped like ``self``: probability ``self`` elementwise, or ``p`` if given."""
    if p is None:
        return bernoulli(self, generator=generator)
    return bernoulli_(_like(self, None, None), p, generator=generator)


def _bernoulli_fn(input, p=None, *, generator=None):
    """Draw 0/1 with probability ``input`` (elementwise), or ``p`` for every element if given."""
    return _bernoulli_method(input, p, generator=generator)


for _name, _fn in {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "random_": random_,
                   "bernoulli": _bernoulli_method, "multinomial": multinomial, "exponential_": exponential_,
                   "geometric_": geometric_, "cauchy_": cauchy_, "log_normal_": log_normal_}.items():
    attach(_name, _fn)
public("bernoulli", _bernoulli_fn)
public("multinomial", multinomial)


# -- factories ----------------------------------------------------------------------------
DRAW_TARGET_HOOK = None
"""Set by a transform while it is active (vmap): ``hook(t)`` receives the fresh plain tensor a
random factory is about to draw into and returns the tensor to draw into instead (vmap batches
it under ``randomness="different"`` and raises under ``"error"``). None otherwise: one global read."""


def _target(t):
    hook = DRAW_TARGET_HOOK
    return t if hook is None or t.__class__ is not Tensor else hook(t)


def _new(size, dtype, device):
    return _target(_mem.empty(size, dtype=dtype or _dt.get_default_dtype(), device=_f._dev(device)))


def rand(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Uniform samples on ``[0, 1)`` of shape ``size`` (``rand(2, 3)``, ``rand((2, 3))`` or ``rand(size=(2, 3))``)."""
    out = uniform_(_new(_f.size_arg("rand", args, size), dtype, device), 0.0, 1.0, generator=generator)
    return _f._finish(out, requires_grad)


def randn(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Standard normal samples of shape ``size``, given as for :func:`rand`."""
    out = normal_(_new(_f.size_arg("randn", args, size), dtype, device), 0.0, 1.0, generator=generator)
    return _f._finish(out, requires_grad)


def _int_arg(name, pos, v):
    """``v`` as an int, or PyTorch's TypeError naming argument ``name`` (at position ``pos``, None for a keyword)."""
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        where = "" if pos is None else f" (position {pos})"
        raise TypeError(f"randint(): argument '{name}'{where} must be int, not {type(v).__name__}")
    return int(v)


_UNSET = object()


def randint(*args, low=_UNSET, high=_UNSET, size=_UNSET, generator=None, dtype=None, device=None,
            requires_grad=False, pin_memory=False):
    """Integers uniform on ``[low, high)`` (int64 by default), with PyTorch's two forms:
    ``randint(high, size)`` and ``randint(low=0, high, size)``, each argument positional or keyword."""
    given = {"low": low, "high": high, "size": size}
    if len(args) > 3:
        raise TypeError(f"randint() takes from 1 to 3 positional arguments but {len(args)} were given")
    # the (low, high, size) form when three are positional, or a keyword says the first positional is low
    long_form = (len(args) == 3 or low is not _UNSET or (args and high is not _UNSET)
                 or (len(args) == 2 and size is not _UNSET))
    names = ("low", "high", "size") if long_form else ("high", "size")
    where = {}
    for i, v in enumerate(args):
        name = names[i]
        if given[name] is not _UNSET:
            raise TypeError(f"randint() got multiple values for argument '{name}'")
        given[name], where[name] = v, i + 1
    if given["high"] is _UNSET:
        raise TypeError("randint() missing required argument 'high'")
    if given["size"] is _UNSET:
        raise TypeError("randint() missing required argument 'size'")
    size = given["size"]
    if not isinstance(size, (tuple, list)):
        at = f" (position {where['size']})" if "size" in where else ""
        raise TypeError(f"randint(): argument 'size'{at} must be tuple of ints, not {type(size).__name__}")
    low = 0 if given["low"] is _UNSET else _int_arg("low", where.get("low"), given["low"])
    high = _int_arg("high", where.get("high"), given["high"])
    out = _random_from_positional(_target(_mem.empty(_f._size((size,)), dtype=dtype or _dt.int64,
                                                     device=_f._dev(device))), low, high, generator)
    return _f._finish(out, requires_grad)


def _like(input, dtype, device):
    return _target(_f._like_of(input, _mem.empty(input._shape, dtype=dtype or input._dtype,
                                                 device=input._device if device is None else _f._dev(device))))


def rand_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None, generator=None):
    """Uniform samples on ``[0, 1)`` with the shape (and by default dtype, device) of ``input``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    return _f._finish(uniform_(_like(input, dtype, device), 0.0, 1.0, generator=generator), requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None, generator=None):
    """Standard normal samples with the shape (and by default dtype, device) of ``input``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    return _f._finish(normal_(_like(input, dtype, device), 0.0, 1.0, generator=generator), requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None,
                 generator=None):
    """Integers on ``[low, high)`` shaped like ``input``: ``randint_like(x, high)`` or ``(x, low, high)``.

    ``memory_format`` is accepted for PyTorch compatibility and ignored: tensors are always row-major.
    """
    if high is None:
        low, high = 0, low
    out = _random_from_positional(_like(input, dtype, device), _int_arg("low", 2, low), _int_arg("high", 3, high),
                                  generator)
    return _f._finish(out, requires_grad)


def _randperm_fn(n, *, generator=None, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` is given)."""
    if DRAW_TARGET_HOOK is not None and isinstance(n, int) and n >= 0:
        # under a transform (vmap): raise, share, or give each example its own permutation, which is
        # the order of as many uniform draws
        keys = _target(_mem.empty((n,), dtype=_dt.float64, device=_f._dev(device)))
        if keys.__class__ is not Tensor:
            order = uniform_(keys, 0.0, 1.0, generator=generator).argsort(-1)
            return _f._finish(order.to(dtype or _dt.int64), requires_grad)
    out = randperm(n, generator=generator, dtype=dtype or _dt.int64, device=_f._dev(device))
    return _f._finish(out, requires_grad)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples: ``normal(mean, std, size)`` with floats, or elementwise with tensor ``mean``/``std``."""
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not tm and not ts:
        if size is None:
            raise TypeError("normal(): with float mean and std, the argument 'size' is required")
        out = normal_(_new(_f._size((size,)), dtype, device), float(mean), float(std), generator=generator)
        return _f._finish(out, requires_grad)
    if ts:
        s = std._check_values()
        if s.size and not np.all(s >= 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")
    # like PyTorch, the result takes mean's dtype (std's when mean is a number)
    ref = mean if tm else std
    if tm and ts and (mean._shape != std._shape or mean.__class__ is not std.__class__):
        # broadcast both ways through an op, so a transform's wrapper (vmap) on either side carries over
        ref = (mean + std).to(mean._dtype)
    out = normal_(_like(ref, None, None), 0.0, 1.0, generator=generator)
    with no_grad():
        out.mul_(std).add_(mean)
    # PyTorch's samples are a differentiable result whose gradient is zero for mean and std (it defines no
    # reparameterization gradient)
    return _f._finish(with_zero_grad(out, mean, std), requires_grad)


for _name, _fn in {"rand": rand, "randn": randn, "randint": randint, "randperm": _randperm_fn,
                   "rand_like": rand_like, "randn_like": randn_like, "randint_like": randint_like,
                   "normal": normal}.items():
    public(_name, _fn)


from . import getitem as _getitem  # noqa: E402,F401


# -- backward formulas ----------------------------------------------------------------
# The in-place draws overwrite self, so its old values get a zero gradient, as in
# PyTorch (zeros rather than None: autograd.grad through them returns zeros too).
# bernoulli's samples do not depend smoothly on the probabilities: zero as well.
# multinomial and randperm give integers: nothing to differentiate.
from ..autograd.formulas import derivative  # noqa: E402


def _zero_grad(grad):
    return _mem.full(grad._shape, 0, dtype=grad._dtype, device=grad._device)


for _name in ("uniform_", "normal_", "bernoulli_.float", "random_.from", "bernoulli", "exponential_", "geometric_",
              "cauchy_", "log_normal_"):
    derivative(_name)(_zero_grad)

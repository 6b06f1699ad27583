"""Data types and PyTorch's type promotion rules.

A ``dtype`` is an immutable singleton naming an element type. Every dtype maps
to a numpy dtype (bfloat16 comes from ``ml_dtypes``), which is the host
exchange format for all backends. ``ml_dtypes`` is imported on the first use
of ``bfloat16.np`` (it costs about a second of CPU to import), not by
``import tensorplug``.

Promotion follows PyTorch: categories bool < integer < floating < complex; between
operands of one priority class (dimensioned tensors, zero-dim tensors, Python
scalars) types are promoted with :func:`promote_types`, and a lower class only
matters when it is of a higher category (so ``int32_tensor + 2.5`` gives the
default float dtype and ``int64_tensor + 2`` stays int64). complex64 and complex128
pair with float32 and float64 (:func:`to_real`, :func:`to_complex`); a complex operand
of a lower priority class keeps the precision of a floating higher one
(``float64_tensor + 1j`` is complex128, ``float32_tensor + complex128_scalar`` complex64).
"""

from __future__ import annotations

import sys

import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16",
    "bfloat16", "float32", "float64", "complex64", "complex128", "promote_types", "get_default_dtype",
    "set_default_dtype", "register_dtype", "all_dtypes",
]

BOOL, INTEGRAL, FLOATING, COMPLEX = 0, 1, 2, 3


class dtype:
    """An element type: ``tensorplug.float32`` and friends.

    Attributes: ``is_floating_point``, ``is_complex``, ``is_signed``, ``itemsize`` (bytes) and
    ``np`` (the numpy dtype used for host exchange).
    """

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_rank", "factory_error", "__weakref__")

    def __init__(self, name, np_dtype, category, rank, itemsize=None, factory_error=None):
        self.name = name
        # a plugin dtype whose tensors only a transform builds (quantized ones: values plus scales):
        # factories (empty, full, zeros_like, ...) raise this message instead of making a plain tensor
        self.factory_error = factory_error
        if np_dtype is not None:
            self.np = np.dtype(np_dtype)
            itemsize = self.np.itemsize
        # else: the ``np`` slot stays empty until __getattr__ resolves it (bfloat16)
        self.itemsize = itemsize
        self.category = category
        self.is_signed = category != BOOL and name != "uint8"
        self._rank = rank

    def __getattr__(self, attr):
        # Only reached when a slot is empty: ``np`` of a dtype whose numpy dtype is resolved
        # on first use. Reading a filled slot never comes here, so the kernels' ``d.np`` stays
        # a plain slot read.
        if attr == "np" and self.name in _LAZY_NP:
            npdt = np.dtype(_LAZY_NP[self.name]())
            self.np = npdt
            _FROM_NP.setdefault(npdt, self)
            return npdt
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    @property
    def is_floating_point(self):
        return self.category == FLOATING

    @property
    def is_complex(self):
        return self.category == COMPLEX

    def to_real(self):
        """The real dtype of a complex one (complex64 -> float32); a real dtype is returned as is."""
        return _TO_REAL.get(self, self)

    def to_complex(self):
        """The complex dtype of a floating one (float32 -> complex64); a complex one is returned as is."""
        if self.category == COMPLEX:
            return self
        try:
            return _TO_COMPLEX[self]
        except KeyError:
            if self is float16:  # PyTorch's complex32
                raise TypeError("Got unsupported ScalarType ComplexHalf") from None
            raise RuntimeError(f"Unknown Complex ScalarType for {scalar_type_name(self)}") from None

    def __repr__(self):
        return f"tensorplug.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_numpy(self):
        """The numpy dtype used to exchange this type with the host."""
        return self.np


bool = dtype("bool", np.bool_, BOOL, 0)
uint8 = dtype("uint8", np.uint8, INTEGRAL, 1)
int8 = dtype("int8", np.int8, INTEGRAL, 1)
int16 = dtype("int16", np.int16, INTEGRAL, 2)
int32 = dtype("int32", np.int32, INTEGRAL, 3)
int64 = dtype("int64", np.int64, INTEGRAL, 4)
float16 = dtype("float16", np.float16, FLOATING, 1)
bfloat16 = dtype("bfloat16", None, FLOATING, 1, itemsize=2)  # numpy dtype: _LAZY_NP
float32 = dtype("float32", np.float32, FLOATING, 3)
float64 = dtype("float64", np.float64, FLOATING, 4)
complex64 = dtype("complex64", np.complex64, COMPLEX, 3)
complex128 = dtype("complex128", np.complex128, COMPLEX, 4)

_BUILTIN = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in _BUILTIN}
_BY_NAME.update({"half": float16, "float": float32, "double": float64, "long": int64,
                 "int": int32, "short": int16, "cfloat": complex64, "cdouble": complex128})
_TO_REAL = {complex64: float32, complex128: float64}
_TO_COMPLEX = {float32: complex64, float64: complex128, bfloat16: complex64}  # bfloat16 has float32's range


def _ml_dtypes_bfloat16():
    import ml_dtypes  # lazy: its import costs more than the rest of tensorplug's; only bfloat16/float8 need it

    return ml_dtypes.bfloat16


# dtypes whose numpy dtype comes from a module that is slow to import: name -> loader
_LAZY_NP = {"bfloat16": _ml_dtypes_bfloat16}
_FROM_NP = {d.np: d for d in _BUILTIN if d.name not in _LAZY_NP}


def _by_name(name):
    return _BY_NAME[name]


def all_dtypes():
    """Every registered dtype (built-in ones first)."""
    seen = []
    for d in tuple(_BY_NAME.values()):  # a copy: a plugin may register a dtype meanwhile
        if d not in seen:
            seen.append(d)
    return seen


def register_dtype(d):
    """Add a plugin dtype (for instance a quantized int8). Names must be unique."""
    if d.name in _BY_NAME and _BY_NAME[d.name] is not d:
        raise ValueError(f"dtype {d.name!r} is already registered")
    _BY_NAME[d.name] = d
    _FROM_NP.setdefault(d.np, d)


def unregister_dtype(d):
    if _BY_NAME.get(d.name) is d and d not in _BUILTIN:
        del _BY_NAME[d.name]
        if _FROM_NP.get(d.np) is d:
            del _FROM_NP[d.np]


def from_numpy_dtype(npdt):
    """The tensorplug dtype for a numpy dtype; TypeError for unsupported ones."""
    npdt = np.dtype(npdt)
    try:
        return _FROM_NP[npdt]
    except KeyError:
        # a numpy bfloat16 array exists only once ml_dtypes is imported: resolve ours then
        if npdt.name in _LAZY_NP and "ml_dtypes" in sys.modules and _BY_NAME[npdt.name].np == npdt:
            return _BY_NAME[npdt.name]
        raise TypeError(
            f"can't convert np.ndarray of type {npdt}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, bfloat16, int64, int32, int16, int8, uint8, "
            "and bool."
        ) from None


def _promote_uncached(a, b):
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOATING and lo._rank > hi._rank:
            return complex128  # float64 with complex64
        return hi
    if a.category == COMPLEX:
        return a if a._rank > b._rank else b
    if a.category == FLOATING:
        if a._rank == b._rank:  # float16 with bfloat16
            return float32
        return a if a._rank > b._rank else b
    # integral: uint8 mixes with a signed type
    if a is uint8 or b is uint8:
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a._rank > b._rank else b


_PROMOTE = {(a, b): _promote_uncached(a, b) for a in _BUILTIN for b in _BUILTIN}


def promote_types(type1, type2):
    """The smallest dtype to which both ``type1`` and ``type2`` may be cast (PyTorch's lattice)."""
    try:
        return _PROMOTE[type1, type2]
    except KeyError:
        if not isinstance(type1, dtype) or not isinstance(type2, dtype):
            raise TypeError(f"promote_types(): expected two dtypes, got {type1!r} and {type2!r}") from None
        if type1 is type2:  # a plugin's dtype (a quantized one) with itself
            return type1
        raise TypeError(f"Promotion for {type1} and {type2} is not supported") from None


_default = [float32]


def get_default_dtype():
    """The default floating point dtype (float32 unless changed)."""
    return _default[0]


def get_default_complex_dtype():
    """The complex dtype of Python complex numbers: complex128 when the default dtype is float64, else complex64."""
    return complex128 if _default[0] is float64 else complex64


def set_default_dtype(d):
    """Set the default floating point dtype: float16, bfloat16, float32 or float64."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d!r}")
    _default[0] = d


_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_C_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                 "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
                 "complex128": "c10::complex<double>"}


def scalar_type_name(d):
    """PyTorch's ScalarType name of ``d`` (``Float``, ``Long``...), which its error messages use."""
    return _SCALAR_TYPE_NAMES.get(d.name, d.name)


def c_type_name(d):
    """The C++ type name PyTorch's messages give for an element of ``d`` (``float``, ``long int``...)."""
    return _C_TYPE_NAMES.get(d.name, d.name)

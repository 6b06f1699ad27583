"""``tensorplug.save`` / ``tensorplug.load``: tensors and state dicts in the safetensors format.

A file is exactly a safetensors file (https://huggingface.co/docs/safetensors):

- 8 bytes: the header size ``N``, an unsigned little-endian 64-bit integer;
- ``N`` bytes: a UTF-8 JSON object mapping each tensor name to
  ``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}`` (offsets
  into the data section), plus ``"__metadata__"``, a flat str -> str map; the
  header is padded with spaces so the data section starts 8-byte aligned;
- the data section: every tensor's elements, row-major, little-endian,
  packed without gaps (largest itemsize first, so each tensor is aligned).

Everything that is not a tensor (nesting in dicts, lists and tuples, dict
keys of any plain type, and int / float / str / bool / None values) is kept
as a JSON tree in ``__metadata__["tensorplug.structure"]`` whose leaves name
the tensors. Loading parses JSON and copies bytes: it never unpickles or
runs code. A file from another safetensors writer (no structure entry)
loads as a flat ``{name: tensor}`` dict.
"""

from __future__ import annotations

import errno
import json
import math
import os
import signal
import stat
import sys
import threading

import numpy as np

from . import dtypes as _dt
from .tensor import Tensor
from .device import device as _device
from .tensor import from_host

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

STRUCTURE_KEY = "tensorplug.structure"
FORMAT_VERSION = 1
MAX_HEADER_SIZE = 100_000_000  # the reference implementation's limit
MAX_DIMS = 64  # numpy's limit on an array's dimensions

_CODES = {_dt.bool: "BOOL", _dt.uint8: "U8", _dt.int8: "I8", _dt.int16: "I16", _dt.int32: "I32",
          _dt.int64: "I64", _dt.float16: "F16", _dt.bfloat16: "BF16", _dt.float32: "F32", _dt.float64: "F64",
          _dt.complex64: "C64"}  # the format has no complex128
_DTYPES = {code: d for d, code in _CODES.items()}
_UNSUPPORTED = {"U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2"}
_SWAP = sys.byteorder == "big"  # the format is little-endian


# -- saving ---------------------------------------------------------------------------------------
class _Encoder:
    """Walks an object, collecting tensors under unique names and building the JSON structure tree."""

    def __init__(self):
        self.tensors = {}   # name -> Tensor, in first-seen order
        self.names = {}     # id(tensor) -> name: the same tensor object is stored once
        self.active = set()  # ids of the containers being walked, to reject cycles

    def name_for(self, path):
        base = ".".join(path) or "tensor"
        name, i = base, 1
        while name in self.tensors or name == "__metadata__":
            name = f"{base}#{i}"
            i += 1
        return name

    def encode(self, obj, path):
        if obj is None or obj.__class__ in (bool, int, str):
            return obj
        if obj.__class__ is float:
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if isinstance(obj, Tensor):
            parts_of = getattr(type(obj), "_tensorplug_save_", None)
            if parts_of is not None:
                # a transform's tensor (a quantized one): plain tensor parts plus JSON metadata
                kind, parts, meta = parts_of(obj)
                json.dumps(meta, allow_nan=False)  # only plain values, checked before anything is written
                return {"$custom": {"kind": kind, "meta": meta,
                                    "parts": {k: self.encode(v, path + (k,)) for k, v in parts.items()}}}
            name = self.names.get(id(obj))
            if name is None:
                name = self.names[id(obj)] = self.name_for(path)
                self.tensors[name] = obj
            return {"$tensor": name}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self.active:
                raise ValueError(f"tensorplug.save: the object contains a reference cycle at {_where(path)}")
            self.active.add(id(obj))
            try:
                if isinstance(obj, dict):
                    return {"$dict": [[self.key(k, path), self.encode(v, path + (str(k),))] for k, v in obj.items()]}
                items = [self.encode(v, path + (str(i),)) for i, v in enumerate(obj)]
                return items if isinstance(obj, list) else {"$tuple": items}
            finally:
                self.active.discard(id(obj))
        raise TypeError(f"tensorplug.save: cannot save an object of type {type(obj).__name__} at {_where(path)}: "
                        "only tensors, dicts, lists, tuples, int, float, str, bool and None can be saved "
                        "(the safetensors format stores no code)")

    def key(self, k, path):
        if k is None or k.__class__ in (bool, int, str):
            return k
        if k.__class__ is float:
            return k if math.isfinite(k) else {"$float": repr(k)}
        raise TypeError(f"tensorplug.save: cannot save a dict key of type {type(k).__name__} at {_where(path)}: "
                        "keys must be str, int, float, bool or None")


def _where(path):
    return "the top level" if not path else "'" + ".".join(path) + "'"


def _host_bytes(t):
    """The tensor's elements as a C-contiguous little-endian numpy array (copied only when needed)."""
    arr = np.ascontiguousarray(t._host())
    if _SWAP and arr.dtype.itemsize > 1:
        arr = arr.byteswap()
    return arr


def save(obj, f):
    """Save ``obj`` (a tensor, or dicts / lists / tuples of tensors and plain values) to ``f`` as safetensors.

    ``f`` is a path or a binary file object. Saving to a path writes a
    temporary file (``.tensorplug-save-*``) in the target's directory and
    renames it into place, so an interrupted save leaves the previous file
    intact, never a half-written one. The file gets the mode ``open()``
    would give it: a new file's follows the umask, an existing file keeps
    its mode (and, where permitted, its owner), a read-only one is refused
    with PermissionError, and a symbolic link is written through (the link
    stays, its target gets the content). The temporary file is removed when
    the save raises (KeyboardInterrupt included) and, in the main thread,
    when a SIGTERM, SIGHUP or SIGINT whose action is to end the process
    arrives: the save removes the file, then the signal ends the process as
    it would have. SIGKILL, a crash, a power loss, or a signal that arrives
    while another thread is saving can leave the temporary file behind (the
    target itself stays intact); it is safe to delete.

    A tensor object that appears several times is stored once and loads
    back as one object; distinct tensors that merely share memory (views)
    are stored separately. Devices and ``requires_grad`` are not stored. A
    flat ``{str: tensor}`` dict gives a file whose tensor names are the
    dict's keys, readable by any safetensors reader.
    """
    enc = _Encoder()
    tree = enc.encode(obj, ())
    structure = json.dumps({"version": FORMAT_VERSION, "tree": tree}, separators=(",", ":"), allow_nan=False)
    # largest itemsize first (stable), so every tensor starts aligned to its itemsize
    items = sorted(enc.tensors.items(), key=lambda kv: -kv[1]._dtype.itemsize)
    header = {"__metadata__": {"format": "pt", STRUCTURE_KEY: structure}}
    offset = 0
    for name, t in items:
        if t._dtype not in _CODES:
            raise TypeError(f"save: the safetensors format has no dtype for {t._dtype} (tensor {_brief(name)})")
        nbytes = t.numel() * t._dtype.itemsize
        header[name] = {"dtype": _CODES[t._dtype], "shape": list(t._shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw += b" " * (-(8 + len(raw)) % 8)

    def write(out):
        out.write(len(raw).to_bytes(8, "little"))
        out.write(raw)
        for _, t in items:
            arr = _host_bytes(t)
            if arr.size:
                out.write(arr.reshape(-1).view(np.uint8).data)

    if hasattr(f, "write"):
        write(f)
        return
    path = _target(os.fspath(f))
    with _RemoveOnSignal() as guard:
        try:
            out = _create_temporary(path, guard)
            with out:
                write(out)
            os.replace(guard.path, path)
            guard.path = None
        except BaseException:
            if guard.path is not None:
                try:
                    os.unlink(guard.path)
                except FileNotFoundError:
                    pass
            raise


def _target(path):
    """The file a save to ``path`` replaces: the end of its chain of symbolic links (``open()`` writes
    through them), after checking what ``open()`` would check."""
    real = os.path.realpath(path)
    if os.path.islink(real):  # realpath gives up on a loop
        raise OSError(errno.ELOOP, "Too many levels of symbolic links", path)
    if os.path.isdir(real):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
    if os.path.exists(real) and not os.access(real, os.W_OK):
        raise PermissionError(errno.EACCES, "Permission denied", path)
    return real


def _create_temporary(path, guard):
    """A new temporary file next to ``path``, open for writing, its name in ``guard.path``.

    ``os.open`` with mode 0o666 lets the umask (and a default ACL) decide the mode, as ``open()``
    does; a file being replaced passes on its own mode and, where permitted, its owner.
    """
    folder = os.path.dirname(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    while True:
        # named before it exists, so a signal arriving as it is created finds the name to remove
        guard.path = os.path.join(folder, f".tensorplug-save-{os.urandom(8).hex()}")
        try:
            fd = os.open(guard.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
            break
        except FileExistsError:
            guard.path = None
    out = os.fdopen(fd, "wb")
    if st is not None:
        try:
            if hasattr(os, "fchown") and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                os.fchown(fd, st.st_uid, st.st_gid)
        except OSError:
            pass  # only root may give a file away: the new file is the saver's, as a new file would be
        if os.chmod in os.supports_fd:
            os.chmod(fd, stat.S_IMODE(st.st_mode))
        else:
            os.chmod(guard.path, stat.S_IMODE(st.st_mode))
    return out


# signals whose default action ends the process without running Python code: a save in the main
# thread catches them while its temporary file exists
_ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name))


class _RemoveOnSignal:
    """While a save writes its temporary file (named in ``path``): a signal of :data:`_ENDING_SIGNALS`
    whose action is the default one removes the file, then ends the process as it would have.

    Only the main thread can install handlers; a handler the program installed (Python's
    KeyboardInterrupt for SIGINT, say) is left alone, since the save's cleanup runs when it raises.
    The previous handlers are restored on exit.
    """

    def __init__(self):
        self.path = None
        self.saved = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in _ENDING_SIGNALS:
                try:
                    if signal.getsignal(sig) is signal.SIG_DFL:
                        self.saved[sig] = signal.signal(sig, self._handle)
                except (ValueError, OSError):  # not the main interpreter
                    pass
        return self

    def __exit__(self, *exc):
        for sig, previous in self.saved.items():
            signal.signal(sig, previous)
        return False

    def _handle(self, signum, frame):
        if self.path is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
        self.path = None
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


# -- loading --------------------------------------------------------------------------------------
class _Reader:
    """Validates a safetensors file completely before reading any tensor data."""

    def __init__(self, fobj, label):
        self.f = fobj
        self.label = label

    def fail(self, problem):
        raise ValueError(f"tensorplug.load: {self.label}: {problem}")

    def read_header(self):
        f = self.f
        start = f.tell()
        f.seek(0, os.SEEK_END)
        size = f.tell() - start
        f.seek(start)
        self.start = start
        if size < 8:
            self.fail(f"not a safetensors file: it is {size} bytes long, shorter than the 8-byte header size")
        n = int.from_bytes(f.read(8), "little")
        if n > MAX_HEADER_SIZE:
            self.fail(f"not a safetensors file (or a corrupt one): its header size field reads {n} bytes, "
                      f"more than the {MAX_HEADER_SIZE} allowed. Files written by torch.save (zip/pickle) "
                      "cannot be loaded.")
        if 8 + n > size:
            self.fail(f"truncated or corrupt: the header should be {n} bytes but only {size - 8} bytes follow "
                      "the header size field")
        raw = f.read(n)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"corrupt header: not valid UTF-8 ({e.reason} at byte {8 + e.start})")
        if not text.startswith("{"):
            self.fail("corrupt header: it does not start with '{'")
        try:
            header = json.loads(text, object_pairs_hook=self._no_duplicates)
        except json.JSONDecodeError as e:
            self.fail(f"corrupt header: invalid JSON ({e.msg} at line {e.lineno} column {e.colno})")
        except RecursionError:
            self.fail("corrupt header: the JSON is nested too deeply")
        self.header_size = n
        self.data_size = size - 8 - n
        return header

    def _no_duplicates(self, pairs):
        d = {}
        for k, v in pairs:
            if k in d:
                self.fail(f"corrupt header: the key {k!r} appears twice")
            d[k] = v
        return d

    def entries(self, header):
        """``(name, dtype, shape, begin, end)`` per tensor, checked against the spec, in data order."""
        if not isinstance(header, dict):
            self.fail("corrupt header: the JSON is not an object")
        out = []
        for name, info in header.items():
            if name == "__metadata__":
                continue
            if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
                self.fail(f"corrupt header: the entry of tensor {_brief(name)} lacks dtype, shape or "
                          "data_offsets")
            code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
            if code.__class__ is not str:  # a list or object would be unhashable below
                self.fail(f"corrupt header: tensor {_brief(name)} has an invalid dtype {_brief(code)}")
            if code in _UNSUPPORTED:
                self.fail(f"tensor {_brief(name)} has dtype {code}, which tensorplug does not support")
            if code not in _DTYPES:
                self.fail(f"corrupt header: tensor {_brief(name)} has an unknown dtype {_brief(code)}")
            if not isinstance(shape, list) or not all(_is_count(s) for s in shape):
                self.fail(f"corrupt header: tensor {_brief(name)} has an invalid shape {_brief(shape)}")
            if (not isinstance(offsets, list) or len(offsets) != 2 or not all(_is_count(o) for o in offsets)
                    or offsets[0] > offsets[1]):
                self.fail(f"corrupt header: tensor {_brief(name)} has invalid data_offsets {_brief(offsets)}")
            dtype = _DTYPES[code]
            # a zero-size tensor's other dimensions are bounded by nothing in the file: check them against
            # what an array can have, as the sizes of other tensors are checked against the data below
            if len(shape) > MAX_DIMS:
                self.fail(f"tensor {_brief(name)} has {len(shape)} dimensions; at most {MAX_DIMS} are supported")
            if math.prod(s for s in shape if s) * dtype.itemsize > sys.maxsize:
                self.fail(f"corrupt header: tensor {_brief(name)} has a shape {_brief(shape)} too large for "
                          "any array")
            if math.prod(shape) * dtype.itemsize != offsets[1] - offsets[0]:
                self.fail(f"corrupt header: tensor {_brief(name)} of dtype {code} and shape {shape} needs "
                          f"{math.prod(shape) * dtype.itemsize} bytes but its data_offsets {offsets} span "
                          f"{offsets[1] - offsets[0]}")
            out.append((name, dtype, tuple(shape), offsets[0], offsets[1]))
        out.sort(key=lambda e: (e[3], e[4]))
        end = 0
        for name, _, _, b, e in out:
            if b != end:
                self.fail(f"corrupt header: the data of tensor {_brief(name)} starts at byte {b} of the data "
                          f"section, expected {end} (tensors must be packed without gaps or overlaps)")
            end = e
        if end > self.data_size:
            self.fail(f"truncated: the header describes {end} bytes of tensor data but the file holds "
                      f"{self.data_size}")
        if end < self.data_size:
            self.fail(f"corrupt: {self.data_size - end} bytes follow the last tensor's data")
        return out

    def read_array(self, dtype, shape, begin):
        arr = np.empty(shape, dtype=dtype.np)
        if arr.size:
            self.f.seek(self.start + 8 + self.header_size + begin)
            got = self.f.readinto(arr.reshape(-1).view(np.uint8))
            if got != arr.nbytes:
                self.fail("truncated while reading tensor data")
            if _SWAP and arr.dtype.itemsize > 1:
                arr = arr.byteswap()
        return arr


def _is_count(x):
    return x.__class__ is int and x >= 0


def _brief(x):
    """``repr(x)`` of a value read from a file, cut short: a hostile header may hold megabytes."""
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def _decode(node, tensors, fail, used):
    """Rebuild the saved object from its structure tree (``tensors``: name -> loaded tensor; the names
    placed are added to ``used``)."""
    if node is None or node.__class__ in (bool, int, float, str):
        return node
    if node.__class__ is list:
        return [_decode(v, tensors, fail, used) for v in node]
    if node.__class__ is dict and len(node) == 1:
        (tag, value), = node.items()
        if tag == "$tensor" and value.__class__ is str:
            if value not in tensors:
                fail(f"corrupt metadata: the structure refers to a tensor {_brief(value)} that the file does "
                     "not hold")
            used.add(value)
            return tensors[value]
        if tag == "$tuple" and value.__class__ is list:
            return tuple(_decode(v, tensors, fail, used) for v in value)
        if tag == "$dict" and value.__class__ is list:
            out = {}
            for pair in value:
                if pair.__class__ is not list or len(pair) != 2:
                    fail("corrupt metadata: a dict entry in the structure is not a [key, value] pair")
                out[_decode_key(pair[0], fail)] = _decode(pair[1], tensors, fail, used)
            return out
        if tag == "$float" and value in ("nan", "inf", "-inf"):
            return float(value)
        if tag == "$custom" and value.__class__ is dict and value.get("kind").__class__ is str \
                and value.get("parts").__class__ is dict:
            parts = {k: _decode(v, tensors, fail, used) for k, v in value["parts"].items()}
            return _rebuild_custom(value["kind"], parts, value.get("meta"), fail)
    fail(f"corrupt metadata: unexpected structure node {json.dumps(node)[:80]}")


TENSOR_KINDS: dict = {}
"""kind -> (rebuild(parts, meta), plugin name): how :func:`load` rebuilds a transform's tensors."""


def register_tensor_kind(kind, rebuild, plugin):
    """Let :func:`load` rebuild tensors saved as ``kind``: ``rebuild(parts, meta)`` gets the plain tensors and the
    JSON metadata that the tensor class's ``_tensorplug_save_()`` returned. ``plugin`` names the provider."""
    TENSOR_KINDS[kind] = (rebuild, plugin)


def _rebuild_custom(kind, parts, meta, fail):
    from .plugins import describe_plugin, is_enabled  # lazy: the plugin manager imports this module's users
    entry = TENSOR_KINDS.get(kind)
    if entry is None or not is_enabled(entry[1]):
        owner = entry[1] if entry else {"quantized": "quantize"}.get(kind)
        where = f"; it is provided by {describe_plugin(owner)}" if owner else ""
        fail(f"the file holds a {kind!r} tensor, which no enabled plugin can rebuild{where}")
    try:
        return entry[0](parts, meta)
    except (KeyError, TypeError, ValueError) as e:
        fail(f"corrupt metadata: the {kind!r} tensor cannot be rebuilt ({e})")


def _decode_key(k, fail):
    if k is None or k.__class__ in (bool, int, float, str):
        return k
    if k.__class__ is dict and len(k) == 1 and k.get("$float") in ("nan", "inf", "-inf"):
        return float(k["$float"])
    fail(f"corrupt metadata: invalid dict key {json.dumps(k)[:80]} in the structure")


def load(f, map_location=None, *, weights_only=True):
    """Load what :func:`save` wrote (or any safetensors file) from ``f``, a path or a seekable binary file object.

    Tensors are placed on ``map_location`` (a device or a device string;
    default CPU). The whole header is validated before any data is read, so
    a truncated or corrupt file raises ValueError naming the file and the
    problem, and nothing is returned. ``weights_only`` exists for PyTorch
    compatibility: loading never unpickles, so only True is accepted.
    """
    if weights_only is False:
        raise ValueError("tensorplug.load: weights_only=False is not supported: tensorplug files are "
                         "safetensors and loading never unpickles or runs code")
    dev = _device("cpu" if map_location is None else map_location)
    if hasattr(f, "read"):
        return _load_from(f, getattr(f, "name", repr(f)), dev, from_host)
    path = os.fspath(f)
    with open(path, "rb") as fobj:
        return _load_from(fobj, repr(path), dev, from_host)


def _load_from(fobj, label, dev, from_host):
    r = _Reader(fobj, str(label))
    header = r.read_header()
    entries = r.entries(header)
    meta = header.get("__metadata__")
    if meta is None:  # absent, or null: the reference reader accepts both
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        r.fail("corrupt header: __metadata__ must map strings to strings")
    structure = None
    if STRUCTURE_KEY in meta:
        try:
            structure = json.loads(meta[STRUCTURE_KEY])
        except json.JSONDecodeError as e:
            r.fail(f"corrupt metadata: the structure entry is not valid JSON ({e.msg})")
        except RecursionError:
            r.fail("corrupt metadata: the structure is nested too deeply")
        if not isinstance(structure, dict) or "tree" not in structure:
            r.fail("corrupt metadata: the structure entry has no tree")
        if structure.get("version") != FORMAT_VERSION:
            r.fail(f"written by a newer tensorplug (structure version {structure.get('version')!r}; "
                   f"this version reads {FORMAT_VERSION})")
    tensors = {name: from_host(r.read_array(dtype, shape, b), dtype, dev) for name, dtype, shape, b, _ in entries}
    if structure is None:
        return tensors
    used = set()
    try:
        obj = _decode(structure["tree"], tensors, r.fail, used)
    except RecursionError:
        r.fail("corrupt metadata: the structure is nested too deeply")
    if len(used) < len(tensors):
        # a tool that added tensors but kept tensorplug's metadata: returning the structure would drop them
        lost = [name for name in tensors if name not in used]
        r.fail(f"corrupt metadata: the structure does not place the tensor{'s' if len(lost) > 1 else ''} "
               f"{', '.join(_brief(n) for n in lost[:5])}{', ...' if len(lost) > 5 else ''} that the file holds "
               "(was it changed after tensorplug wrote it?); a safetensors reader loads every tensor by name")
    return obj


# -- PyTorch's allowlist for weights_only unpickling ------------------------------------------------------------
# tensorplug's files hold no pickles, so nothing is ever unpickled; the list is kept so programs written for
# torch.load(weights_only=True) that register their classes run unchanged.
_SAFE_GLOBALS: list = []


def _check_globals(globs):
    if not isinstance(globs, (list, tuple)):
        raise TypeError(f"safe_globals must be a list of classes or functions (or (callable, name) tuples), "
                        f"got {type(globs).__name__}")
    return list(globs)


def add_safe_globals(safe_globals):
    """Mark classes and functions as safe for ``weights_only`` loading (accepted for PyTorch compatibility)."""
    for g in _check_globals(safe_globals):
        if g not in _SAFE_GLOBALS:
            _SAFE_GLOBALS.append(g)


def get_safe_globals():
    """The globals marked safe by :func:`add_safe_globals` (a new list)."""
    return list(_SAFE_GLOBALS)


def clear_safe_globals():
    """Forget every global marked safe."""
    _SAFE_GLOBALS.clear()


class safe_globals:
    """Context manager: the given globals are marked safe inside the ``with`` block only."""

    def __init__(self, safe_globals):
        self.safe_globals = _check_globals(safe_globals)

    def __enter__(self):
        self._saved = list(_SAFE_GLOBALS)
        add_safe_globals(self.safe_globals)
        return self

    def __exit__(self, *exc):
        _SAFE_GLOBALS[:] = self._saved
        return False

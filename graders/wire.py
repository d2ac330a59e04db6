"""The wire format between the trusted test process and a submission's worker process.

Messages are length-prefixed JSON. Values are plain data with a few tags:

    None, bool, int, float (NaN and infinities included), str      as JSON
    list                                                            JSON array
    {"$": "t", "v": [...]}           tuple
    {"$": "d", "v": [[k, v], ...]}   dict (any plain keys)
    {"$": "s" | "fs", "v": [...]}    set, frozenset
    {"$": "b", "v": base64}          bytes
    {"$": "nd", "dtype", "shape", "v": base64}   numpy array (numeric and bool dtypes only)
    {"$": "np", "dtype", "v": base64}            numpy scalar
    {"$": "h", "id": n, "kind": k, "name": s}    a handle to an object living in the worker
    {"$": "fn", "module": m, "name": n}          a module-level function of graders.support

Decoding is strict: anything else is an error. No pickle, ever: the worker runs untrusted
code, so all it can send is data, never an object with behaviour of its own (an ``__eq__``
that is always true, a ``__del__``, ...).

The trusted side bounds what a reply can cost it: a reply may hold at most ``REPLY_BYTES``
bytes (a kata that needs more sets ``[grading] reply_bytes`` in its kata.toml), must arrive
in full within ``REPLY_SECONDS`` of its first byte, and decodes under a budget of
``MAX_ELEMENTS`` values nested at most ``MAX_DEPTH`` deep. So a hostile reply costs the
trusted process a bounded amount of memory and time, and fails its test with a clear message.

Read-only inputs: for katas whose prompt says the arguments are never modified, the worker
decodes the arguments of each request with ``read_only=True``: numpy arrays become views
over immutable ``bytes`` (``setflags(write=True)`` cannot undo that), lists and dicts become
``FrozenList`` / ``FrozenDict`` (a list or dict in every other respect, whose mutating
methods raise). An in-place write then raises inside the implementation, and the test sees
the failure as a return value across the wire. ``freeze`` gives the same inputs in-process.
"""

from __future__ import annotations

import base64
import json
import math
import os
import select
import struct
import time
from typing import Any, BinaryIO, Callable

MAX_MESSAGE = 64 * 1024 * 1024     # the hard ceiling on any message, either way
REPLY_BYTES = 4 * 1024 * 1024      # the default cap on one reply from a worker
REPLY_SECONDS = 5.0                # a reply must arrive in full this soon after it starts
MAX_DEPTH = 64
MAX_ELEMENTS = 1 << 20             # values (list items, dict entries, ...) in one reply
MAX_CONTAINERS = 1 << 18           # JSON arrays and objects in one reply, counted before parsing
NUMPY_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
     "float16", "float32", "float64"])


class WireError(ValueError):
    """A message that is not valid under this format."""


READ_ONLY_MESSAGE = ("argument is read-only: the function must not modify the inputs it is "
                     "given (copy it first)")


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(f"this {type(self).__name__[6:].lower()} {READ_ONLY_MESSAGE}")


class FrozenList(list):  # type: ignore[type-arg]
    """A list whose contents cannot be changed through its own methods."""

    __slots__ = ()
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        import copy

        return [copy.deepcopy(v, memo) for v in self]

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (list, (list(self),))


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict whose contents cannot be changed through its own methods."""

    __slots__ = ()
    pop = popitem = clear = update = setdefault = _refuse
    __setitem__ = __delitem__ = __ior__ = _refuse

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        import copy

        return {copy.deepcopy(k, memo): copy.deepcopy(v, memo) for k, v in self.items()}

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (dict, (dict(self),))


def freeze(value: Any, depth: int = 0) -> Any:
    """``value`` as the worker's read-only decoding would give it (for in-process tests of
    trusted code): arrays as read-only views, lists and dicts as frozen copies, tuples and
    sets walked; anything else as it is. The caller's own objects are never changed."""
    if depth > MAX_DEPTH:
        return value
    t = type(value)
    if t is list or t is FrozenList:
        return FrozenList(freeze(v, depth + 1) for v in value)
    if t is dict or t is FrozenDict:
        return FrozenDict((freeze(k, depth + 1), freeze(v, depth + 1)) for k, v in value.items())
    if t is tuple:
        return tuple(freeze(v, depth + 1) for v in value)
    if getattr(t, "__module__", "") == "numpy" and t.__name__ == "ndarray":
        view = value.view()
        view.flags.writeable = False
        return view
    return value


def send(stream: BinaryIO, message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":"), allow_nan=True).encode("utf-8")
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE}")
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


def recv(stream: BinaryIO) -> dict[str, Any] | None:
    """The next message, or None at end of stream."""
    head = _read_exact(stream, 4)
    if head is None:
        return None
    (size,) = struct.unpack("<I", head)
    if size > MAX_MESSAGE:
        raise WireError(f"message of {size} bytes exceeds {MAX_MESSAGE}")
    body = _read_exact(stream, size)
    if body is None:
        return None
    message = json.loads(body.decode("utf-8"))
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    return message


def reply_cap(raw: dict[str, Any]) -> int:
    """The reply cap of a kata, from its kata.toml's ``[grading] reply_bytes`` (raw TOML)."""
    grading = raw.get("grading", {})
    value = grading.get("reply_bytes", REPLY_BYTES) if isinstance(grading, dict) else REPLY_BYTES
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_MESSAGE:
        raise WireError(f"[grading] reply_bytes must be an int in 1..{MAX_MESSAGE}, got {value!r}")
    return value


class Stopped(Exception):
    """The watch of a call (a CPU meter) ended it while its reply was awaited."""


def recv_reply(fd: int, cap: int, first_byte_s: float, rest_s: float = REPLY_SECONDS,
               watch: Callable[[], str | None] | None = None) -> dict[str, Any] | None:
    """One reply read from the raw descriptor ``fd`` (unbuffered, so select sees all
    that is pending), under a size cap and two clocks: ``first_byte_s`` for the reply to
    start, then ``rest_s`` from its first byte (the length header's included) for all of it
    to arrive. ``watch`` is called every 20 ms until the whole reply is in; a reason it
    returns raises ``Stopped``. None at end of stream. Raises ``TimeoutError`` when the
    reply does not start in time and ``WireError`` for one that is too large, too slow to
    finish, or not a valid message."""
    first: list[float] = []
    start_by = time.monotonic() + first_byte_s
    head = _read_fd(fd, 4, start_by, rest_s, first, watch)
    if head is None:
        return None
    (size,) = struct.unpack("<I", head)
    if size > cap:
        raise WireError(f"a reply of {size} bytes exceeds the cap of {cap} bytes "
                        "(a kata that needs larger replies sets [grading] reply_bytes)")
    body = _read_fd(fd, size, start_by, rest_s, first, watch)
    if body is None:
        return None
    # Every JSON array or object costs the parser far more memory than its bytes: count
    # them (brackets inside strings count too, so this only errs towards refusing).
    if body.count(b"[") + body.count(b"{") > MAX_CONTAINERS:
        raise WireError(f"a reply holding more than {MAX_CONTAINERS} lists and dicts")
    try:
        message = json.loads(body.decode("utf-8"))
    except RecursionError:
        raise WireError("a reply nested too deeply to parse") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"a reply that is not valid JSON: {str(exc)[:200]}") from None
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    return message


def _read_fd(fd: int, n: int, start_by: float, rest_s: float, first: list[float],
             watch: Callable[[], str | None] | None) -> bytes | None:
    """``n`` bytes; ``first`` holds the time the reply's first byte came (set here)."""
    chunks: list[bytes] = []
    got = 0
    while got < n:
        deadline = start_by if not first else first[0] + rest_s
        left = deadline - time.monotonic()
        if left <= 0:
            if not first:
                raise TimeoutError("no reply started in time")
            raise WireError(f"the reply stopped after {got} of {n} bytes and did not finish "
                            f"within {rest_s:g} s of its first byte")
        ready = select.select([fd], [], [], left if watch is None else min(left, 0.02))[0]
        if not ready:
            reason = watch() if watch is not None else None
            if reason:
                raise Stopped(reason)
            continue
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        if not first:
            first.append(time.monotonic())
        chunks.append(chunk)
        got += len(chunk)
    if watch is not None:   # the reply is in: one last reading covers all of it
        reason = watch()
        if reason:
            raise Stopped(reason)
    return b"".join(chunks)


def _read_exact(stream: BinaryIO, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def encode(value: Any, handle_of: Callable[[Any], dict[str, Any]], depth: int = 0) -> Any:
    """Plain data to JSON-able form; anything else becomes a handle via ``handle_of``."""
    if depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        return value
    if t is float:
        return value
    if t is list or t is FrozenList:
        return [encode(v, handle_of, depth + 1) for v in value]
    if t is tuple:
        return {"$": "t", "v": [encode(v, handle_of, depth + 1) for v in value]}
    if t is dict or t is FrozenDict:
        return {"$": "d", "v": [[encode(k, handle_of, depth + 1), encode(v, handle_of, depth + 1)]
                                for k, v in value.items()]}
    if t is set or t is frozenset:
        return {"$": "s" if t is set else "fs",
                "v": [encode(v, handle_of, depth + 1) for v in value]}
    if t is bytes or t is bytearray:
        return {"$": "b", "v": base64.b64encode(bytes(value)).decode("ascii")}
    module = getattr(t, "__module__", "")
    if module == "numpy" and t.__name__ == "ndarray" and str(value.dtype) in NUMPY_DTYPES:
        import numpy as np

        arr = np.require(value, requirements="C")  # ascontiguousarray would make a 0-d array 1-d
        return {"$": "nd", "dtype": str(arr.dtype), "shape": list(arr.shape),
                "v": base64.b64encode(arr.tobytes()).decode("ascii")}
    if module == "numpy" and hasattr(value, "dtype") and str(value.dtype) in NUMPY_DTYPES \
            and getattr(value, "shape", None) == ():
        return {"$": "np", "dtype": str(value.dtype),
                "v": base64.b64encode(value.tobytes()).decode("ascii")}
    return handle_of(value)


class Budget:
    """How many more values a decode may build (shared by every level of one decode)."""

    def __init__(self, elements: int = MAX_ELEMENTS) -> None:
        self.left = elements

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise WireError(f"a value holding more than {MAX_ELEMENTS} elements")


def decode(data: Any, make_handle: Callable[[dict[str, Any]], Any], depth: int = 0,
           budget: Budget | None = None, read_only: bool = False) -> Any:
    """Strictly the inverse of ``encode``; handles become whatever ``make_handle`` returns.
    At most ``MAX_ELEMENTS`` values (``budget``) nested at most ``MAX_DEPTH`` deep.

    With ``read_only`` (the worker, for katas whose inputs must be left alone) arrays are
    views over immutable bytes and lists and dicts are frozen (see the module docstring)."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested more than {MAX_DEPTH} deep")
    if budget is None:
        budget = Budget()
    budget.take()
    if data is None or isinstance(data, (bool, str)):
        return data
    if isinstance(data, int):
        return int(data)
    if isinstance(data, float):
        return float(data)
    if isinstance(data, list):
        items = [decode(v, make_handle, depth + 1, budget, read_only) for v in data]
        return FrozenList(items) if read_only else items
    if not isinstance(data, dict) or not isinstance(data.get("$"), str):
        raise WireError(f"not a wire value: {str(data)[:100]}")
    tag = data["$"]
    if tag == "t":
        return tuple(decode(v, make_handle, depth + 1, budget, read_only) for v in _list(data))
    if tag == "d":
        out = {}
        for pair in _list(data):
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("a dict entry must be a [key, value] pair")
            key = decode(pair[0], make_handle, depth + 1, budget, read_only)
            if isinstance(key, (list, dict, set)):
                raise WireError("unhashable dict key")
            out[key] = decode(pair[1], make_handle, depth + 1, budget, read_only)
        return FrozenDict(out) if read_only else out
    if tag in ("s", "fs"):
        items = [decode(v, make_handle, depth + 1, budget, read_only) for v in _list(data)]
        if any(isinstance(v, (list, dict, set)) for v in items):
            raise WireError("unhashable set item")
        return set(items) if tag == "s" else frozenset(items)
    if tag == "b":
        return base64.b64decode(_str(data, "v"), validate=True)
    if tag in ("nd", "np"):
        import numpy as np

        dtype = _str(data, "dtype")
        if dtype not in NUMPY_DTYPES:
            raise WireError(f"numpy dtype {dtype!r} is not allowed")
        raw = base64.b64decode(_str(data, "v"), validate=True)
        if tag == "np":
            return np.frombuffer(raw, dtype=dtype)[0]
        shape = data.get("shape")
        if not isinstance(shape, list) or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise WireError("bad numpy shape")
        if math.prod(shape) * np.dtype(dtype).itemsize != len(raw):
            raise WireError("numpy data does not match its shape")
        array = np.frombuffer(raw, dtype=dtype).reshape(shape)
        # over immutable bytes the array can never be made writeable; otherwise a private copy
        return array if read_only else array.copy()
    if tag in ("h", "fn"):
        return make_handle(data)
    raise WireError(f"unknown wire tag {tag!r}")


def _list(data: dict[str, Any]) -> list[Any]:
    v = data.get("v")
    if not isinstance(v, list):
        raise WireError("expected a list")
    return v


def _str(data: dict[str, Any], key: str) -> str:
    v = data.get(key)
    if not isinstance(v, str):
        raise WireError(f"expected a string at {key!r}")
    return v

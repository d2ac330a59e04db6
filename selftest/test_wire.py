"""The JSON wire between the grader and the sandboxed worker: values come back as they went.

Plain data and numpy arrays must round-trip exactly (shape, dtype, values), including the
shapes that are easy to lose: 0-d arrays, empty arrays, non-contiguous views.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from graders import wire


def _round_trip(value: Any) -> Any:
    return wire.decode(wire.encode(value, lambda x: {"$": "h", "id": 0}), lambda d: None)


@pytest.mark.parametrize("value", [
    0, -7, 2**70, 1.5, True, None, "text", b"\x00\xffbytes", [1, [2, "x"]], (1, (2.5, "y")),
    {"a": [1, 2], "b": {"c": None}},
], ids=repr)
def test_plain_values_round_trip(value: Any) -> None:
    got = _round_trip(value)
    assert got == value and type(got) is type(value)


def test_special_floats_round_trip() -> None:
    got = _round_trip([math.inf, -math.inf, math.nan])
    assert got[0] == math.inf and got[1] == -math.inf and math.isnan(got[2])


@pytest.mark.parametrize("array", [
    np.array(3.5),                                   # 0-d: must not come back as shape (1,)
    np.zeros((0, 3)),
    np.arange(12, dtype=np.int64).reshape(3, 4).T,   # a non-contiguous view
    np.array([[np.inf, -np.inf], [np.nan, 1.0]], dtype=np.float32),
    np.array([True, False]),
], ids=["0-d", "empty", "transposed", "float32-special", "bool"])
def test_arrays_keep_shape_dtype_and_values(array: np.ndarray) -> None:
    got = _round_trip(array)
    assert isinstance(got, np.ndarray)
    assert got.shape == array.shape and got.dtype == array.dtype
    assert np.array_equal(got, array, equal_nan=array.dtype.kind == "f")


# -- bounded replies: what a hostile worker's reply can cost the trusted side ----------

def _pipe_with(data: bytes) -> int:
    """The read end of a pipe that a thread fills with ``data`` and then closes."""
    import os
    import threading

    r, w = os.pipe()

    def fill() -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(w, view):]
        except OSError:
            pass
        finally:
            os.close(w)

    threading.Thread(target=fill, daemon=True).start()
    return r


def _frame(body: bytes, size: int | None = None) -> bytes:
    import struct

    return struct.pack("<I", len(body) if size is None else size) + body


def test_a_reply_within_the_cap_arrives() -> None:
    import os

    fd = _pipe_with(_frame(b'{"ok": [1, 2]}'))
    try:
        assert wire.recv_reply(fd, 1024, 1.0) == {"ok": [1, 2]}
        assert wire.recv_reply(fd, 1024, 1.0) is None  # end of stream
    finally:
        os.close(fd)


def test_an_oversized_reply_is_refused_from_its_header() -> None:
    import os

    fd = _pipe_with(_frame(b"", size=wire.REPLY_BYTES + 1))
    try:
        with pytest.raises(wire.WireError, match="exceeds the cap"):
            wire.recv_reply(fd, wire.REPLY_BYTES, 1.0)
    finally:
        os.close(fd)


def test_a_reply_that_never_finishes_fails_within_its_clock() -> None:
    import os
    import time

    r, w = os.pipe()
    os.write(w, _frame(b'{"ok": 1', size=1000))  # promises 1000 bytes, sends 8, stays open
    try:
        start = time.monotonic()
        with pytest.raises(wire.WireError, match="did not finish"):
            wire.recv_reply(r, 4096, 1.0, rest_s=0.5)
        assert time.monotonic() - start < 2.0
        with pytest.raises(TimeoutError):  # nothing at all: the call's own clock
            wire.recv_reply(r, 4096, 0.2)
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("body, message", [
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply|not valid JSON"),
    (b'{"ok": ' + b"[" * 100 + b"]" * 100 + b"}", None),
    (b"not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
], ids=["deep-json", "deep-value", "garbage", "not-an-object"])
def test_hostile_bodies_are_wire_errors(body: bytes, message: str | None) -> None:
    import os

    fd = _pipe_with(_frame(body))
    try:
        if message is None:  # parses, but decoding it exceeds the depth budget
            reply = wire.recv_reply(fd, len(body) + 10, 1.0)
            assert reply is not None
            with pytest.raises(wire.WireError, match="nested more than"):
                wire.decode(reply["ok"], lambda d: None)
        else:
            with pytest.raises(wire.WireError, match=message):
                wire.recv_reply(fd, len(body) + 10, 1.0)
    finally:
        os.close(fd)


def test_decode_has_an_element_budget() -> None:
    flat = list(range(wire.MAX_ELEMENTS + 5))
    with pytest.raises(wire.WireError, match="more than"):
        wire.decode(flat, lambda d: None)
    assert len(wire.decode(list(range(1000)), lambda d: None)) == 1000


def test_reply_cap_comes_from_kata_toml() -> None:
    assert wire.reply_cap({}) == wire.REPLY_BYTES
    assert wire.reply_cap({"grading": {"reply_bytes": 1 << 24}}) == 1 << 24
    for bad in (0, -1, "big", True, wire.MAX_MESSAGE + 1):
        with pytest.raises(wire.WireError, match="reply_bytes"):
            wire.reply_cap({"grading": {"reply_bytes": bad}})


def test_a_reply_that_stops_inside_its_header_fails_within_its_clock() -> None:
    """The first byte starts the reply's clock, even when it is only part of the length
    header (a worker that writes one byte and then works would otherwise wait out the
    whole call unwatched); the watch is called until the reply is in."""
    import os
    import time

    r, w = os.pipe()
    os.write(w, b"\x00")
    calls = []
    try:
        start = time.monotonic()
        with pytest.raises(wire.WireError, match="did not finish"):
            wire.recv_reply(r, 4096, 30.0, rest_s=0.3, watch=lambda: calls.append(1) or None)
        assert time.monotonic() - start < 2.0 and calls
        os.write(w, b"\x00")
        with pytest.raises(wire.Stopped, match="over"):
            wire.recv_reply(r, 4096, 30.0, rest_s=5.0, watch=lambda: "over")
        assert time.monotonic() - start < 3.0
    finally:
        os.close(r)
        os.close(w)

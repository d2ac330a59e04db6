"""A byte-level model of OutputBuffers and a stateful machine that checks an implementation
against it after every step.

One machine, several test classes: each owns the checks of one rubric item and asserts
only those. When the implementation disagrees with the model on something the class does
not own, the stream is set aside ("tainted": no more events for it), so that a bug in one
rule costs the rubric item of that rule, not every item the machine touches afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from graders.impl import kata_impl

bp = kata_impl("backpressure")

IDS = ("a", "b", "c", "d", "e")
PERIOD = 251  # a prime: a misplaced slice of the byte pattern shows unless it moves by 251


@dataclass
class Stream:
    """What the implementation must hold for one open stream."""

    salt: int
    produced: bytearray = field(default_factory=bytearray)  # every byte accepted, in order
    handed: int = 0       # bytes returned by next_write so far
    acked: int = 0        # bytes acknowledged by write_done so far
    finished: bool = False
    cancels: int = 0

    @property
    def queued(self) -> int:
        return len(self.produced) - self.handed

    @property
    def pending(self) -> int:
        return self.handed - self.acked

    def next_bytes(self, size: int) -> bytes:
        start = len(self.produced) + self.salt
        return bytes((start + i) % PERIOD for i in range(size))


def norm(actions: Any) -> list[tuple[str, str]]:
    return sorted(tuple(a) for a in actions)


class Divergence(Exception):
    """The implementation disagreed with the model on a check this class does not own."""


class BuffersMachine(RuleBasedStateMachine):
    """Random outputs, writes, partial acks, finishes, disconnects and late events."""

    OWN: frozenset[str] = frozenset()

    def __init__(self) -> None:
        super().__init__()
        self.budget = 1
        self.buf: Any = None
        self.live: dict[str, Stream] = {}
        self.ended: set[str] = set()     # ids whose last stream ended (late events allowed)
        # ids whose last stream's generation finished: the prompt rules out any output or a
        # second finish for them ("the engine never reports output after on_finish for the
        # same stream, and reports on_finish at most once per stream"), so none is driven
        self.generation_done: set[str] = set()
        self.tainted: set[str] = set()   # ids set aside after an unowned divergence
        self.log: list[tuple[str, str]] = []   # (stream id, "call -> answer")
        self.incarnations = 0
        self.touched: set[str] = set()   # streams the current step acted on
        self.steps = 0

    # -- checking ---------------------------------------------------------------------

    def check(self, items: str | tuple[str, ...], ok: bool, sid: str, message: str) -> None:
        items = (items,) if isinstance(items, str) else items
        if ok:
            return
        if any(i in self.OWN for i in items):
            mine = [text for who, text in self.log if who == sid][-40:]
            raise AssertionError(
                f"{message}\nOutputBuffers({self.budget}); the calls on stream {sid!r} so far "
                f"(the last {len(mine)}; other streams left out):\n  " + "\n  ".join(mine))
        raise Divergence(sid)

    def taint(self, sid: str) -> None:
        self.live.pop(sid, None)
        self.ended.discard(sid)
        self.tainted.add(sid)

    # Who owns an unexpected exception from each call.
    OWNERS = {"open": ("ordered_delivery",), "on_output": ("budget_includes_pending",),
              "next_write": ("ordered_delivery",),
              "write_done": ("budget_includes_pending", "ordered_delivery"),
              "on_finish": ("close_after_drain",), "on_disconnect": ("cancel_once",),
              "buffered": ("budget_includes_pending",)}

    def call(self, sid: str, text: str, fn: Any, *args: Any,
             owners: tuple[str, ...] | None = None, expect: type | None = None,
             quiet: bool = False) -> Any:
        self.touched.add(sid)
        try:
            result = fn(*args)
        except Exception as exc:  # noqa: BLE001 - an unexpected exception is a finding
            if expect is not None and isinstance(exc, expect):
                raise
            self.log.append((sid, f"{text} raised {type(exc).__name__}: {exc}"))
            # the call's name from its text: under isolation ``fn`` is a proxy of the
            # worker's method, which need not carry a __name__
            name = text.split("(", 1)[0]
            self.check(owners or self.OWNERS[name], False, sid,
                       f"{text} raised {type(exc).__name__}: {exc}")
            raise
        if not quiet:
            self.log.append((sid, f"{text} -> {result!r}"))
        return result

    def guarded(self, sid: str, body: Any) -> None:
        try:
            body()
        except Divergence:
            self.taint(sid)

    def end(self, sid: str) -> None:
        del self.live[sid]
        self.ended.add(sid)

    def check_gone(self, sid: str, items: str | tuple[str, ...], why: str) -> None:
        """After a stream ended: nothing buffered, nothing to write."""
        items = (items,) if isinstance(items, str) else items
        got = self.call(sid, f"buffered({sid!r})", self.buf.buffered, sid, owners=items)
        self.check(items, got == 0, sid, f"{why}: buffered({sid!r}) must be 0, got {got}")
        chunk = self.call(sid, f"next_write({sid!r}, 64)", self.buf.next_write, sid, 64,
                          owners=items)
        self.check(items, chunk == b"", sid,
                   f"{why}: next_write({sid!r}, 64) must return b'', got {chunk!r}")

    # -- rules --------------------------------------------------------------------------

    @initialize(budget=st.integers(1, 24))
    def setup(self, budget: int) -> None:
        self.budget = budget
        self.buf = bp.OutputBuffers(budget)

    # Weights: outputs, writes and acks are where the traps are; ends and late events
    # come often enough to churn through ids and reuse them.
    KINDS = ("output", "write", "ack", "output", "write", "ack", "open", "lifecycle", "late")

    @rule(data=st.data())
    def step(self, data: st.DataObject) -> None:
        producing = [k for k, s in self.live.items() if not s.finished]
        able = {"open": True, "output": bool(producing), "write": bool(self.live),
                "ack": any(s.pending for s in self.live.values()),
                "lifecycle": bool(self.live), "late": bool(self.ended)}
        kinds = [k for k in self.KINDS if able[k]]
        self.touched = set()
        self.steps += 1
        getattr(self, data.draw(st.sampled_from(kinds), label="event"))(data)

    def open(self, data: st.DataObject) -> None:
        sid = data.draw(st.sampled_from(IDS), label="stream")
        if sid in self.tainted:
            return
        if sid in self.live:
            before = self.buf.buffered(sid)
            try:
                self.call(sid, f"open({sid!r})", self.buf.open, sid, expect=ValueError)
            except ValueError:
                self.log.append((sid, "  raised ValueError"))
            else:
                self.guarded(sid, lambda: self.check(
                    "ordered_delivery", False, sid,
                    f"open({sid!r}) of an open stream must raise ValueError"))
                return
            after = self.buf.buffered(sid)
            self.guarded(sid, lambda: self.check(
                "ordered_delivery", after == before, sid,
                f"a failed open({sid!r}) changed buffered from {before} to {after}"))
            return
        def body() -> None:
            self.call(sid, f"open({sid!r})", self.buf.open, sid,
                      owners=("late_output",) if sid in self.ended else None)
            self.incarnations += 1
            self.live[sid] = Stream(salt=self.incarnations * 37)
            self.ended.discard(sid)
            self.generation_done.discard(sid)
            got = self.call(sid, f"buffered({sid!r})", self.buf.buffered, sid)
            self.check("late_output", got == 0, sid,
                       f"a freshly opened stream {sid!r} must be empty, got buffered {got}")

        self.guarded(sid, body)

    def output(self, data: st.DataObject) -> None:
        # only streams whose generation still runs: no output after on_finish
        sid = data.draw(st.sampled_from(sorted(k for k, s in self.live.items()
                                               if not s.finished)), label="stream")
        shape = data.draw(st.sampled_from(["any", "any", "fill", "fill-1", "any", "fill+1",
                                           "big", "empty"]), label="shape")
        s = self.live[sid]
        room = self.budget - s.queued - s.pending
        size = {"fill": room, "fill+1": room + 1, "fill-1": room - 1, "big": self.budget + 1,
                "empty": 0}.get(shape)
        if size is None:
            size = data.draw(st.integers(0, max(1, room + 2)), label="size")
        size = max(0, size)
        payload = s.next_bytes(size)

        def body() -> None:
            got = norm(self.call(sid, f"on_output({sid!r}, <{size} bytes>)",
                                 self.buf.on_output, sid, payload))
            overflow = s.queued + s.pending + size > self.budget
            if overflow:
                self.check("budget_includes_pending", got != [], sid,
                           f"queued {s.queued} + pending {s.pending} + {size} new bytes exceed "
                           f"the budget {self.budget}: on_output must overflow, got {got}")
                cancels = sum(1 for a in got if a[0] == "cancel")
                self.check("cancel_once", cancels <= 1 and s.cancels + cancels <= 1, sid,
                           f"overflow of {sid!r} must cancel once, got {got}")
                self.check("overflow_cancels", got == [("cancel", sid), ("close", sid)], sid,
                           f"overflow of {sid!r} must answer one cancel and one close, got {got}")
                self.end(sid)
                self.check_gone(sid, "overflow_cancels",
                                f"after {sid!r} overflowed its buffered bytes are dropped")
            else:
                self.check("budget_includes_pending", got == [], sid,
                           f"queued {s.queued} + pending {s.pending} + {size} new bytes fit "
                           f"the budget {self.budget}: on_output must not overflow, got {got}")
                s.produced += payload

        self.guarded(sid, body)

    def write(self, data: st.DataObject) -> None:
        ready = sorted(k for k, s in self.live.items() if s.queued and not s.pending)
        anyone = data.draw(st.sampled_from([False, False, True]), label="any stream")
        sid = data.draw(st.sampled_from(ready if ready and not anyone else sorted(self.live)),
                        label="stream")
        max_bytes = data.draw(st.one_of(st.integers(1, 6), st.just(64)), label="max_bytes")
        s = self.live[sid]

        def body() -> None:
            chunk = self.call(sid, f"next_write({sid!r}, {max_bytes})",
                              self.buf.next_write, sid, max_bytes)
            self.check("ordered_delivery", isinstance(chunk, bytes), sid,
                       f"next_write must return bytes, got {type(chunk).__name__}")
            if s.pending:
                self.check("budget_includes_pending", chunk == b"", sid,
                           f"{s.pending} bytes of {sid!r} are still pending: next_write must "
                           f"return b'' (one chunk pending at a time), got {chunk!r}")
                return
            want = bytes(s.produced[s.handed:s.handed + len(chunk)])
            self.check("ordered_delivery", len(chunk) <= max_bytes and chunk == want, sid,
                       f"next_write({sid!r}, {max_bytes}) must return the next queued bytes "
                       f"{bytes(s.produced[s.handed:s.handed + max_bytes])!r} (or a prefix), "
                       f"got {chunk!r}")
            self.check("ordered_delivery", s.queued == 0 or chunk != b"", sid,
                       f"{s.queued} bytes are queued and none pending: next_write({sid!r}, "
                       f"{max_bytes}) must return at least one byte, got b''")
            s.handed += len(chunk)

        self.guarded(sid, body)

    def ack(self, data: st.DataObject) -> None:
        sid = data.draw(st.sampled_from(sorted(k for k, s in self.live.items() if s.pending)),
                        label="stream")
        how = data.draw(st.sampled_from(["full", "partial", "partial", "full", "one", "zero",
                                         "too much"]), label="how")
        s = self.live[sid]
        if how == "too much":
            self.ack_too_much(sid, s, s.pending + data.draw(st.integers(1, 3), label="extra"))
            return
        n = {"full": s.pending, "one": 1, "zero": 0}.get(how)
        if n is None:
            n = data.draw(st.integers(1, s.pending), label="n")

        def body() -> None:
            got = norm(self.call(sid, f"write_done({sid!r}, {n})", self.buf.write_done, sid, n))
            s.acked += n
            done = s.finished and s.queued == 0 and s.pending == 0
            self.check("cancel_once", not any(a[0] == "cancel" for a in got), sid,
                       f"write_done must never cancel, got {got}")
            if done:
                self.check("close_after_drain", got == [("close", sid)], sid,
                           f"{sid!r} finished and this write_done acknowledged its last byte: "
                           f"expected [('close', {sid!r})], got {got}")
                self.end(sid)
                self.check_gone(sid, "close_after_drain", f"{sid!r} closed")
            else:
                self.check("close_after_drain", got == [], sid,
                           f"{sid!r}: finished={s.finished}, queued {s.queued}, pending "
                           f"{s.pending} after this ack: nothing to close yet, got {got}")

        self.guarded(sid, body)

    def ack_too_much(self, sid: str, s: Stream, n: int) -> None:

        def body() -> None:
            try:
                self.call(sid, f"write_done({sid!r}, {n})", self.buf.write_done, sid, n,
                          expect=ValueError)
            except ValueError:
                self.log.append((sid, "  raised ValueError"))
                raised = True
            else:
                raised = False
            self.check("budget_includes_pending", raised, sid,
                       f"write_done({sid!r}, {n}) with only {s.pending} pending must raise "
                       "ValueError")
            got = self.buf.buffered(sid)
            self.check("budget_includes_pending", got == s.queued + s.pending, sid,
                       f"a failed write_done changed buffered({sid!r}) to {got}, expected "
                       f"{s.queued + s.pending}")

        self.guarded(sid, body)

    def lifecycle(self, data: st.DataObject) -> None:
        kind = data.draw(st.sampled_from(["finish", "finish", "disconnect"]), label="event")
        unfinished = sorted(k for k, s in self.live.items() if not s.finished)
        if kind == "finish" and unfinished:
            self.finish(data.draw(st.sampled_from(unfinished), label="stream"))
        else:
            self.disconnect(data.draw(st.sampled_from(sorted(self.live)), label="stream"))

    def finish(self, sid: str) -> None:
        s = self.live[sid]

        def body() -> None:
            got = norm(self.call(sid, f"on_finish({sid!r})", self.buf.on_finish, sid))
            s.finished = True
            self.generation_done.add(sid)
            self.check("cancel_once", not any(a[0] == "cancel" for a in got), sid,
                       f"a stream that finished normally is never cancelled, got {got}")
            if s.queued == 0 and s.pending == 0:
                self.check("close_after_drain", got == [("close", sid)], sid,
                           f"{sid!r} finished with nothing queued or pending: expected "
                           f"[('close', {sid!r})], got {got}")
                self.end(sid)
                self.check_gone(sid, "close_after_drain", f"{sid!r} closed")
            else:
                self.check("close_after_drain", got == [], sid,
                           f"{sid!r} finished with {s.queued} queued and {s.pending} pending "
                           f"bytes: it must not close before they are delivered, got {got}")

        self.guarded(sid, body)

    def disconnect(self, sid: str) -> None:
        s = self.live[sid]

        def body() -> None:
            got = norm(self.call(sid, f"on_disconnect({sid!r})", self.buf.on_disconnect, sid))
            cancels = sum(1 for a in got if a[0] == "cancel")
            want_cancels = 0 if s.finished else 1
            self.check("cancel_once", cancels == want_cancels, sid,
                       f"disconnect of {sid!r} (generation finished: {s.finished}) must cancel "
                       f"{want_cancels} time(s), got {got}")
            self.check("close_after_drain", [a for a in got if a[0] == "close"] == [("close", sid)],
                       sid, f"disconnect of {sid!r} must close it exactly once, got {got}")
            self.end(sid)
            self.check_gone(sid, "late_output", f"{sid!r} disconnected")

        self.guarded(sid, body)

    def late(self, data: st.DataObject) -> None:
        sid = data.draw(st.sampled_from(sorted(self.ended)), label="stream")
        # the engine's late output and finish come only for a generation that did not
        # finish (a cancel takes effect after the step in flight); never after on_finish
        kinds = ["disconnect", "ack0", "ack", "write"]
        if sid not in self.generation_done:
            kinds = ["output", "finish"] + kinds
        kind = data.draw(st.sampled_from(kinds), label="late event")

        def body() -> None:
            late = ("late_output",)
            if kind == "output":
                got: Any = self.call(sid, f"on_output({sid!r}, b'late') [ended]",
                                     self.buf.on_output, sid, b"late", owners=late)
            elif kind == "finish":
                got = self.call(sid, f"on_finish({sid!r}) [ended]", self.buf.on_finish, sid,
                                owners=late)
            elif kind == "disconnect":
                got = self.call(sid, f"on_disconnect({sid!r}) [ended]",
                                self.buf.on_disconnect, sid, owners=late)
            elif kind == "ack0":
                got = self.call(sid, f"write_done({sid!r}, 0) [ended]",
                                self.buf.write_done, sid, 0, owners=late)
            elif kind == "ack":
                got = self.call(sid, f"write_done({sid!r}, 3) [ended]",
                                self.buf.write_done, sid, 3, owners=late)
            else:
                got = self.call(sid, f"next_write({sid!r}, 8) [ended]",
                                self.buf.next_write, sid, 8, owners=late)
            if kind == "write":
                self.check("late_output", got == b"", sid,
                           f"next_write on ended stream {sid!r} must return b'', got {got!r}")
            else:
                got = norm(got)
                self.check("cancel_once", not any(a[0] == "cancel" for a in got), sid,
                           f"a late {kind} for ended stream {sid!r} must not cancel again, got {got}")
                self.check("late_output", got == [], sid,
                           f"a late {kind} for ended stream {sid!r} must return [], got {got}")
            self.check_gone(sid, "late_output", f"after a late {kind} for ended {sid!r}")

        self.guarded(sid, body)

    # -- invariants ---------------------------------------------------------------------

    @invariant()
    def buffered_is_queued_plus_pending(self) -> None:
        """After every step for the streams it touched, every fourth step for all (each
        call may cross a process boundary when grading, so they are counted)."""
        if self.buf is None:
            return
        every = self.steps % 4 == 0
        for sid, s in list(self.live.items()):
            if not every and sid not in self.touched:
                continue
            def body() -> None:
                got = self.call(sid, f"buffered({sid!r})", self.buf.buffered, sid, quiet=True)
                self.check(
                    "budget_includes_pending", got == s.queued + s.pending and got <= self.budget,
                    sid, f"buffered({sid!r}) must be queued {s.queued} + pending {s.pending} = "
                         f"{s.queued + s.pending} (budget {self.budget}), got {got}")

            self.guarded(sid, body)

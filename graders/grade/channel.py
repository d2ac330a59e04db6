"""The progress channel: the events one trusted pytest sends over its pipe, read and checked."""

from __future__ import annotations

import json
import os
import select
import time
from typing import Any

from graders.grade.model import MESSAGE_CHARS, TestResult


class Channel:
    """The events of one trusted pytest, read from the progress pipe and checked.

    Accepted: at most one ``sandbox`` event and one ``collected`` event, then for each
    collected test a ``start`` followed by its one ``result``. Rejected (the channel is
    then treated as broken, the child killed and the test involved failed): a result with
    no matching start, a second result for a test, a start or result for a test that was
    not collected (or already graded), a malformed line, or more bytes than a line may
    hold."""

    LINE_BYTES = 8 << 20

    def __init__(self, fd: int, known: dict[str, TestResult] | None, done: set[str]) -> None:
        self.fd = fd
        self.known = known
        self.done = done
        self.buffer = b""
        self.eof = False
        self.sandbox: dict[str, Any] | None = None
        self.collected: list[dict[str, Any]] | None = None
        self.ids: set[str] = set()
        self.current: str | None = None
        self.started = time.monotonic()
        self.last_event = time.monotonic()
        self.violation: str | None = None
        self.blame: str | None = None
        self.results: dict[str, dict[str, Any]] = {}
        self.accepted = 0
        self.by_id: dict[str, TestResult] | None = known

    def pump(self, timeout: float) -> None:
        """Read what the pipe holds (waiting at most ``timeout`` s) and take its events."""
        if self.eof or self.violation is not None:
            time.sleep(timeout)
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self.fd, 1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            return
        self.buffer += chunk
        while b"\n" in self.buffer and self.violation is None:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self._take(line)
        if len(self.buffer) > self.LINE_BYTES:
            self._reject("an event longer than the channel allows")

    def drain(self) -> None:
        while not self.eof and self.violation is None:
            ready, _, _ = select.select([self.fd], [], [], 0)
            if not ready:
                return
            self.pump(0)

    def _reject(self, why: str, nodeid: str | None = None) -> None:
        self.violation = f"the progress channel carried an invalid event: {why}"
        self.blame = nodeid if nodeid is not None else self.current

    def _take(self, line: bytes) -> None:
        try:
            e = json.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            self._reject("a line that is not JSON")
            return
        kind = e.get("event") if isinstance(e, dict) else None
        self.last_event = time.monotonic()
        if kind == "sandbox":
            if self.sandbox is not None or self.collected is not None or \
                    not isinstance(e.get("capabilities"), dict):
                self._reject("a second or late sandbox event")
                return
            self.sandbox = e["capabilities"]
        elif kind == "collected":
            self._collected(e)
        elif kind == "start":
            nodeid = e.get("nodeid")
            if self.collected is None or not isinstance(nodeid, str) or nodeid not in self.ids:
                self._reject(f"a start for a test that was not collected: {str(nodeid)[:200]}")
            elif self.current is not None:
                self._reject(f"a start for {nodeid} while {self.current} runs")
            elif nodeid in self.results or nodeid in self.done:
                self._reject(f"a second start for {nodeid}", nodeid)
            else:
                self.current, self.started = nodeid, time.monotonic()
        elif kind == "result":
            self._result(e)
        else:
            self._reject(f"an unknown event {str(kind)[:50]!r}")

    def _collected(self, e: dict[str, Any]) -> None:
        tests = e.get("tests")
        if self.collected is not None or not isinstance(tests, list):
            self._reject("a second collection")
            return
        ids: set[str] = set()
        for t in tests:
            rules = t.get("rules", []) if isinstance(t, dict) else None
            if not (isinstance(t, dict) and isinstance(t.get("nodeid"), str)
                    and isinstance(t.get("rubric"), str)
                    and t.get("visibility") in ("public", "hidden")
                    and isinstance(rules, list) and len(rules) <= 50
                    and all(isinstance(r, str) and len(r) <= 200 for r in rules)) \
                    or t["nodeid"] in ids:
                self._reject("a malformed collection")
                return
            if self.known is not None and (t["nodeid"] not in self.known
                                           or t["nodeid"] in self.done):
                self._reject(f"a collection naming an unknown or graded test {t['nodeid']}")
                return
            ids.add(t["nodeid"])
        self.collected, self.ids = tests, ids

    def _result(self, e: dict[str, Any]) -> None:
        nodeid = e.get("nodeid")
        if not isinstance(nodeid, str) or nodeid not in self.ids:
            self._reject(f"a result for a test that was not collected: {str(nodeid)[:200]}")
        elif nodeid in self.results or nodeid in self.done:
            self._reject(f"a second result for {nodeid}", nodeid)
        elif nodeid != self.current:
            self._reject(f"a result for {nodeid} with no matching start")
        elif e.get("outcome") not in ("passed", "failed", "skipped") or \
                not isinstance(e.get("message"), str) or \
                not isinstance(e.get("note", ""), str) or \
                not isinstance(e.get("duration"), (int, float)):
            self._reject(f"a malformed result for {nodeid}")
        else:
            self.results[nodeid] = e
            self.current = None
            self.accepted += 1
            if self.by_id is not None:
                self._apply_one(e)

    def apply(self, by_id: dict[str, TestResult]) -> None:
        """Record every accepted result (the first attempt learns its tests from its own
        collection, so its results are applied once that is known)."""
        self.by_id = by_id
        for e in self.results.values():
            self._apply_one(e)

    def _apply_one(self, e: dict[str, Any]) -> None:
        assert self.by_id is not None
        res = self.by_id[e["nodeid"]]
        res.outcome, res.message = e["outcome"], e["message"]
        res.note = e.get("note", "")[:MESSAGE_CHARS]
        res.duration = float(e["duration"])
        self.done.add(res.nodeid)

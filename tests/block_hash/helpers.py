"""Test helpers for block_hash shared by the public and hidden tests.

``KVRecord`` is the KV-content oracle: whenever the pool hands the test a block to fill,
the test records which content (namespace + token prefix) it wrote there; a block later
handed out as a cache hit must hold exactly the prefix the request needs at that position.
"""

from __future__ import annotations

Content = tuple[str, tuple[int, ...]]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def describe(content: Content | None) -> str:
    if content is None:
        return "nothing the test ever wrote"
    ns, toks = content
    return f"namespace={ns!r} tokens={list(toks)}"


class KVRecord:
    """What the test wrote into each block (the truth about KV content)."""

    def __init__(self, block_size: int) -> None:
        self.bs = block_size
        self.kv: dict[int, Content] = {}

    def write(self, table: list[int], first: int, namespace: str, tokens: list[int]) -> None:
        """The request computed blocks ``first ..`` of ``table`` for ``tokens``."""
        for i in range(first, len(table)):
            self.kv[table[i]] = (namespace, tuple(tokens[:min((i + 1) * self.bs, len(tokens))]))

    def check_hits(self, table: list[int], hits: int, namespace: str, tokens: list[int],
                   context: str = "") -> None:
        for i in range(hits):
            want = (namespace, tuple(tokens[:(i + 1) * self.bs]))
            got = self.kv.get(table[i])
            assert got == want, (
                f"{context}block {table[i]} was handed out as a cache hit at position {i}, "
                f"but it holds the KV of {describe(got)}; the request needs {describe(want)}")

    def is_full(self, b: int) -> bool:
        c = self.kv.get(b)
        return c is not None and len(c[1]) > 0 and len(c[1]) % self.bs == 0

"""Chance as data: deals are a pure function of a text key (seed, game, round).

The permutation comes from SHAKE-256 of the key read as one big number in mixed radix
(a Fisher-Yates shuffle whose draws are its digits). Unlike ``random.Random``, whose
``sample`` and ``shuffle`` may change between Python versions, this stays the same
forever, so an old replay always re-simulates; and the bias is below 2**-128.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from functools import cache
from typing import TypeVar

T = TypeVar("T")


def draw(key: str, items: Sequence[T], count: int | None = None) -> list[T]:
    """The first ``count`` items (all by default) of a uniform shuffle keyed by ``key``."""
    pool = list(items)
    n = len(pool)
    count = n if count is None else count
    if not 0 <= count <= n:
        raise ValueError(f"cannot draw {count} of {n} items")
    x = int.from_bytes(hashlib.shake_256(key.encode()).digest(_digest_bytes(n, count)), "big")
    out = []
    for size in range(n, n - count, -1):
        x, i = divmod(x, size)
        out.append(pool[i])
        pool[i] = pool[size - 1]
    return out


@cache
def _digest_bytes(n: int, count: int) -> int:
    """Bytes of SHAKE-256 a draw of ``count`` of ``n`` items reads: enough bits for every
    ordering, plus 128 (a deal asks for the same sizes every round: worked out once)."""
    bits = math.ceil(math.log2(math.perm(n, count) or 1)) + 128
    return (bits + 7) // 8

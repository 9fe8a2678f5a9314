"""The caches' byte budget (core.lru): what a cache holds never passes its
budget, whatever the number of entries; a value larger than the whole
budget is not kept; removing entries gives their bytes back."""

from __future__ import annotations

from core.lru import LRU


def test_a_byte_budget_bounds_what_is_held() -> None:
    c: LRU[str, str] = LRU(1_000, max_bytes=100, size=len)
    for i in range(50):
        c.put(f"k{i}", "x" * 30)
        assert c.bytes <= 100
    assert len(c) == 3 and c.bytes == 90
    assert c.get("k49") and c.get("k0") is None  # the oldest went first
    c.put("huge", "y" * 101)
    assert c.get("huge") is None and c.bytes == 90
    c.put("k49", "z" * 10)  # replacing an entry gives its old bytes back
    assert c.bytes == 70
    c.pop("k48")
    assert c.bytes == 40
    c.clear()
    assert c.bytes == 0 and len(c) == 0


def test_without_a_sizer_only_the_count_bounds_it() -> None:
    c: LRU[int, str] = LRU(3)
    for i in range(10):
        c.put(i, "x" * 1000)
    assert len(c) == 3 and c.bytes == 0 and c.max_bytes is None

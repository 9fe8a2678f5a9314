"""A view holds only if everything it reads holds, at any depth.

core.sql.validity judges one view against what its bases are now (its
direct status). This carries those verdicts up the graph of views reading
views at one commit: a view that reads a view that does not hold does not
hold either, and its reasons name the way there (``shop.top →
shop.big_regions → shop.revenue: table shop.revenue dropped``). A view that
reads itself through others does not hold, and says so (``shop.a → shop.b
→ shop.a: reads itself``); nor does one that reads through more than
``max_depth`` levels of views, which are not followed further.

Each view is judged once per call, whatever the number of views that read
it: the graph's strongly connected components (Tarjan's, without recursion),
dependencies first. Pure: the caller gives the direct statuses and, per
view, the views it reads that are still the objects it read.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from core.sql.model import Key
from core.sql.validity import Cause, ViewStatus

# Per view: the views it reads (by key) that still hold the object it read.
Reads = Mapping[Key, Sequence[Key]]
_UNKNOWN = 1 << 30  # the height of a view not looked at (past the depth limit)


def transitive(direct: Mapping[Key, ViewStatus], reads: Reads, wanted: Iterable[Key],
               max_depth: int) -> dict[Key, ViewStatus]:
    """The status of each view of ``wanted`` and of every view it reads
    through others. ``direct`` has each view looked at; a key ``reads``
    names that ``direct`` lacks is a view past the depth limit."""
    out: dict[Key, ViewStatus] = {}
    height: dict[Key, int] = {}
    for component in _components(direct, reads, wanted):
        members = set(component)
        cyclic = len(component) > 1 or component[0] in reads.get(component[0], ())
        for key in component:
            out[key], height[key] = _judge(key, direct[key], reads, members, cyclic, out,
                                           height, max_depth)
    return out


def _judge(key: Key, own: ViewStatus, reads: Reads, members: set[Key], cyclic: bool,
           done: Mapping[Key, ViewStatus], heights: Mapping[Key, int], max_depth: int,
           ) -> tuple[ViewStatus, int]:
    """The view's status from its own and those of the views it reads
    (judged already, but for those of its own component), and its height:
    the levels of views below it."""
    if own.status == "unanalysed":
        return own, 0  # it records nothing it reads
    outside = [k for k in dict.fromkeys(reads.get(key, ())) if k not in members]
    height = max((heights.get(k, _UNKNOWN) + 1 for k in outside), default=0)
    causes = list(own.causes)
    if cyclic:
        causes.append(Cause("reads itself", via=_shortest_cycle(reads, key, members)))
    if height > max_depth:
        causes.append(Cause(f"reads views nested more than {max_depth} levels deep, "
                            "the most the catalog follows", inherited=False))
    seen = {(c.via[-1] if c.via else None, c.about, c.text) for c in causes}
    for k in outside:
        below = done.get(k)
        if below is None or below.status != "invalid":
            continue
        for c in below.causes:
            took = Cause(c.text, c.about, (k, *c.via))
            root = (took.via[-1], took.about, took.text)
            if c.inherited and root not in seen:  # one way to each cause is enough
                seen.add(root)
                causes.append(took)
    if not causes:
        return own, height
    return ViewStatus("invalid", tuple(c.render(key) for c in causes), own.analysis,
                      tuple(causes)), height


def _shortest_cycle(reads: Reads, key: Key, members: set[Key]) -> tuple[Key, ...]:
    """The views after ``key`` on a shortest way from it back to itself,
    within its component (which has one)."""
    parent: dict[Key, Key] = {}
    queue = deque([key])
    while queue:
        at = queue.popleft()
        for k in reads.get(at, ()):
            if k == key:
                way = [at]
                while way[-1] != key:
                    way.append(parent[way[-1]])
                return (*reversed(way[:-1]), key)
            if k in members and k not in parent:
                parent[k] = at
                queue.append(k)
    return (key,)


def _components(direct: Mapping[Key, ViewStatus], reads: Reads,
                wanted: Iterable[Key]) -> list[list[Key]]:
    """The strongly connected components of the views reachable from
    ``wanted`` (among those in ``direct``), each after every component it
    reads; members in the order met."""
    index: dict[Key, int] = {}
    low: dict[Key, int] = {}
    stack: list[Key] = []
    on_stack: set[Key] = set()
    out: list[list[Key]] = []
    edges: dict[Key, list[Key]] = {}
    for root in wanted:
        if root in index or root not in direct:
            continue
        work: list[tuple[Key, int]] = [(root, 0)]
        while work:
            key, i = work.pop()
            if i == 0:
                index[key] = low[key] = len(index)
                stack.append(key)
                on_stack.add(key)
            nxt = edges.get(key)
            if nxt is None:
                nxt = edges[key] = [k for k in reads.get(key, ()) if k in direct]
            if i < len(nxt):
                work.append((key, i + 1))
                k = nxt[i]
                if k not in index:
                    work.append((k, 0))
                elif k in on_stack:
                    low[key] = min(low[key], index[k])
                continue
            if low[key] == index[key]:
                component: list[Key] = []
                while True:
                    k = stack.pop()
                    on_stack.discard(k)
                    component.append(k)
                    if k == key:
                        break
                out.append(component[::-1])
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[key])
    return out

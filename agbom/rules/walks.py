"""Bounded walks over the rules' graph view: DFS order, longest path, depths, and the
capability unions below each node with their witness paths (split from engine.py)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping

from agbom.inventory import ROOT_ID
from agbom.rules.view import _Graph

# From this many sources on, an incremental run fills reach and least-privilege unions for the
# whole graph in one pass (as a full run does) instead of searching below each source.
_PREFILL_AT = 256


def _dfs(graph: _Graph) -> list[str]:
    """One DFS over the whole graph: its post-order (children before parents) and back edges.

    Starts at the root, then at any node the root does not reach; the result is cached on
    ``graph``. Without back edges the graph is acyclic and the post-order is a reverse
    topological order, which :func:`_prefill_unions` and :func:`_longest_path` walk.
    """
    if graph.postorder is not None:
        return graph.postorder
    succ = graph.succ
    order: list[str] = []
    state: dict[str, int] = {}  # 1 on stack, 2 done
    back: set[tuple[str, str]] = set()
    inner: list[str] = []
    # The root reaches every node in a ComponentGraph (``_reach_all``), so the other starts are
    # only a safety net; their order changes nothing below (their nodes are not reachable from
    # the root, so the longest path ignores them), hence no sorting.
    for start in (ROOT_ID, *graph.nodes):
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(succ[start]))]
        while stack:
            node, children = stack[-1]
            advanced = False
            for child in children:
                mark = state.get(child)
                if mark is None:
                    grandchildren = succ[child]
                    if not grandchildren:
                        # A leaf (most tools): finish it in place, same order as a push/pop.
                        state[child] = 2
                        order.append(child)
                        continue
                    state[child] = 1
                    stack.append((child, iter(grandchildren)))
                    advanced = True
                    break
                if mark == 1:
                    back.add((node, child))
            if not advanced:
                state[node] = 2
                order.append(node)
                if node != ROOT_ID and succ[node]:
                    inner.append(node)
                stack.pop()
    graph.back_edges = back
    graph.inner = inner
    graph.postorder = order
    return order


def _longest_path(graph: _Graph) -> list[str]:
    """Longest path from the root, ignoring the back edges a DFS finds (cycles)."""
    if graph.longest is not None:
        return graph.longest
    order = _dfs(graph)
    succ = graph.succ
    back = graph.back_edges
    best: dict[str, int] = {ROOT_ID: 0}
    parent: dict[str, str] = {}
    for node in reversed(order):  # a topological order of the graph without back edges
        here = best.get(node)
        if here is None:
            continue
        here += 1
        for child in succ[node]:
            if back and (node, child) in back:
                continue
            if best.get(child, -1) < here:
                best[child] = here
                parent[child] = node
    deepest = max(best.values())
    end = min(n for n, d in best.items() if d == deepest)  # ties: the smallest id
    chain = [end]
    while chain[-1] in parent:
        chain.append(parent[chain[-1]])
    graph.longest = list(reversed(chain))
    return graph.longest


def _depths_within(graph: _Graph, nodes: set[str]) -> dict[str, int] | None:
    """Longest distance from the root to each of ``nodes``, over edges among ``nodes`` only.

    ``nodes`` must be closed under predecessors (the changed nodes and their ancestors), so
    these are the distances in the whole graph. ``None`` if the edges among them close a
    cycle.

    The cost follows ``nodes``, not the graph: a node's children inside ``nodes`` are found
    from whichever side is smaller, its successors or ``nodes`` (asking each whether the
    node is its predecessor), so the root's 100,000 children are not walked for one change.
    """
    succ = graph.succ
    pred = graph.pred
    ordered = sorted(nodes)
    inside: dict[str, list[str]] = {}

    def children_within(node: str) -> list[str]:
        found = inside.get(node)
        if found is None:
            below = succ[node]
            if len(below) <= len(ordered):
                found = [child for child in below if child in nodes]
            else:
                found = [child for child in ordered if node in pred[child]]
            inside[node] = found
        return found

    order: list[str] = []
    state: dict[str, int] = {}
    for start in ordered:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(children_within(start)))]
        while stack:
            node, children = stack[-1]
            for child in children:
                mark = state.get(child)
                if mark == 1:
                    return None
                if mark is None:
                    state[child] = 1
                    stack.append((child, iter(children_within(child))))
                    break
            else:
                state[node] = 2
                order.append(node)
                stack.pop()
    depth: dict[str, int] = {ROOT_ID: 0}
    for node in reversed(order):
        here = depth.get(node)
        if here is None:
            continue
        for child in inside[node]:
            if depth.get(child, -1) < here + 1:
                depth[child] = here + 1
    return depth


def _height(graph: _Graph, start: str, heights: dict[str, int]) -> int:
    """Edges on the longest path down from ``start`` (memoized; the graph is acyclic)."""
    succ = graph.succ
    if start in heights:
        return heights[start]
    stack = [(start, iter(succ[start]))]
    best = {start: 0}
    while stack:
        node, children = stack[-1]
        for child in children:
            known = heights.get(child)
            if known is None:
                best[child] = 0
                stack.append((child, iter(succ[child])))
                break
            best[node] = max(best[node], known + 1)
        else:
            heights[node] = best.pop(node)
            stack.pop()
            if stack:
                parent = stack[-1][0]
                best[parent] = max(best[parent], heights[node] + 1)
    return heights[start]


def _prefill_unions(
    graph: _Graph,
    memo: dict[str, frozenset[str]],
    leaf: Mapping[str, frozenset[str]],
    expand: Callable[[str], bool] | None,
) -> None:
    """Fill ``memo`` with :func:`_union_below` for every inner node, in one bottom-up pass.

    Only on an acyclic graph (no DFS back edges), where the per-source DFS of
    :func:`_union_below` memoizes exactly these values for every node it visits; so the
    findings, witnesses included, are the same, at the cost of one pass over the edges
    instead of a search per source. Under a cycle the lazy DFS stays in charge. ``leaf`` maps
    the nodes that contribute something to what they contribute (absent: nothing);
    ``expand`` is ``None`` when every node is walked through.
    """
    _dfs(graph)
    if graph.back_edges:
        return
    succ = graph.succ
    leaf_of, below_of = leaf.get, memo.get
    empty: frozenset[str] = frozenset()
    # Children before parents; leaves have nothing below them, and the root (often the parent
    # of thousands) is left to the lazy DFS, which only needs it if the root is a source.
    for node in graph.inner:
        children = succ[node]
        parts: list[frozenset[str]] = []
        for child in children:
            contributes = leaf_of(child)
            if contributes:
                parts.append(contributes)
            if expand is None or expand(child):
                below = below_of(child)
                if below:
                    parts.append(below)
        if not parts:
            memo[node] = empty
        elif len(parts) == 1:
            memo[node] = parts[0]  # shared, not copied: frozensets are never changed
        else:
            memo[node] = empty.union(*parts)


def _covers_some(declared: str, exposed: frozenset[str]) -> bool:
    """``any(covers(declared, c) for c in exposed)`` for names the callers already stripped
    and lower-cased (it runs for every declared capability of every skill)."""
    if declared in ("*", ".*"):
        return bool(exposed)
    if declared.endswith(".*"):
        declared = declared[:-2]
    if declared in exposed:
        return True
    prefix = declared + "."
    return any(c.startswith(prefix) for c in exposed)


def _always(_node: str) -> bool:
    return True


def _union_below(
    graph: _Graph,
    start: str,
    memo: dict[str, frozenset[str]],
    leaf: Callable[[str], frozenset[str] | tuple[str, ...]],
    expand: Callable[[str], bool],
) -> frozenset[str]:
    """``U(n) = union over successors s of leaf(s), plus U(s) when expand(s)``, memoized.

    An iterative DFS (no recursion limit on long composition chains). A node whose subtree
    closes a cycle is not memoized from the DFS; it is computed exactly by a BFS instead.
    """
    hit = memo.get(start)
    if hit is not None:
        return hit
    succ = graph.succ
    incomplete: set[str] = set()
    on_stack = {start}
    acc: dict[str, set[str]] = {start: set()}
    stack = [(start, iter(succ[start]))]
    while stack:
        node, children = stack[-1]
        advanced = False
        for child in children:
            acc[node].update(leaf(child))
            if not expand(child):
                continue
            done = memo.get(child)
            if done is not None:
                acc[node].update(done)
            elif child in on_stack or child in incomplete:
                incomplete.add(node)
            else:
                on_stack.add(child)
                acc[child] = set()
                stack.append((child, iter(succ[child])))
                advanced = True
                break
        if advanced:
            continue
        stack.pop()
        on_stack.discard(node)
        result = acc.pop(node)
        if node not in incomplete:
            memo[node] = frozenset(result)
        if stack:
            parent = stack[-1][0]
            acc[parent].update(result)
            if node in incomplete:
                incomplete.add(parent)
    if start in memo:
        return memo[start]
    # A cycle below ``start``: a plain BFS is exact (and then safe to memoize).
    seen = {start}
    total: set[str] = set()
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for child in succ[current]:
            total.update(leaf(child))
            if expand(child) and child not in seen:
                seen.add(child)
                queue.append(child)
    memo[start] = frozenset(total)
    return memo[start]


def _witnesses(
    graph: _Graph,
    source: str,
    wanted: Iterable[str],
    caps_of: Callable[[str], frozenset[str] | tuple[str, ...]],
    expand: Callable[[str], bool],
    memo: dict[str, frozenset[str]] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """For each wanted capability, a node below ``source`` exposing it, with BFS parents.

    With the ``memo`` of :func:`_union_below` the search descends straight into the first
    child whose subtree holds the capability (depth x degree steps); without it, or when
    that would loop, it falls back to a BFS with early exit. A child the memo does not cover
    yet (under a cycle the DFS memoizes only what it closed, so coverage depends on which
    sources were searched before) has its union computed first: the witness then depends on
    the graph alone, and an incremental run names the path a full one does.
    """
    missing = set(wanted)
    parent: dict[str, str] = {source: ""}
    found: list[str] = []
    if memo is not None:
        for cap in sorted(missing):
            if cap not in missing:
                continue  # an earlier witness already exposes it
            current, steps = source, 0
            while steps < len(graph.nodes):
                steps += 1
                nxt = None
                for child in graph.children(current):
                    if cap in caps_of(child):
                        if child not in parent:
                            parent[child] = current
                        found.append(child)
                        missing -= set(caps_of(child))
                        nxt = ""
                        break
                    if nxt is not None or not expand(child):
                        continue
                    below = memo.get(child)
                    if below is None:
                        below = _union_below(graph, child, memo, caps_of, expand)
                    if cap in below:
                        nxt = child
                if nxt is None or nxt == "":
                    break
                if nxt in parent and nxt != source:
                    break  # would loop; let the BFS below handle it
                parent[nxt] = current
                current = nxt
        if not missing:
            return sorted(set(found)), parent
    queue = deque([source])
    seen = {source}
    bfs_parent: dict[str, str] = {source: ""}
    while queue and missing:
        current = queue.popleft()
        for child in graph.children(current):
            if child in seen:
                continue
            seen.add(child)
            bfs_parent[child] = current
            hits = missing.intersection(caps_of(child))
            if hits:
                found.append(child)
                missing -= hits
                if not missing:
                    break
            if expand(child):
                below = memo.get(child) if memo is not None else None
                if below is not None and missing.isdisjoint(below):
                    # Nothing still missing lies below: skipping the subtree changes no
                    # witness and no parent on a witness's chain (those nodes all have a
                    # missing capability below them), it only saves the walk.
                    continue
                queue.append(child)
    for node in found:  # use BFS parents for witnesses the BFS found
        if node not in parent:
            walk = node
            while walk != source and walk not in parent:
                parent[walk] = bfs_parent[walk]
                walk = bfs_parent[walk]
    return sorted(set(found)), parent


def _chain(parent: Mapping[str, str], source: str, target: str) -> list[str]:
    chain = [target]
    while chain[-1] != source:
        chain.append(parent[chain[-1]])
    return list(reversed(chain))

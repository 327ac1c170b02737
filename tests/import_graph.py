"""The import loops of a module graph, for the layering tests (tests/test_layering.py, tests/test_layering_ui.py)."""


def loops(graph: dict[str, list[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm), each sorted.

    ``graph`` maps a module to the modules it imports (names outside the graph are ignored).
    """
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in graph:
        if v not in index:
            visit(v)
    return groups

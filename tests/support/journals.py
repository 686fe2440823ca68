"""An AIDE journal of a search tree, made up to any size."""


def synthetic_journal(n: int = 250, *, maximize: bool = True) -> dict:
    """An aideml-shaped journal (``node2parent``, ``_term_out`` as a list)."""
    nodes, node2parent = [], {}
    for i in range(n):
        buggy = i % 4 == 3
        nodes.append(
            {
                "id": f"n{i}",
                "step": i,
                "plan": f"plan {i}",
                "code": f"print({i})",
                "_term_out": [f"out {i}\n", "done\n"],
                "exec_time": 1.5,
                "metric": None if buggy else {"value": i / n, "maximize": maximize},
                "is_buggy": buggy,
                "parent": None,
                "children": [],
                "ctime": 1_700_000_000 + 10 * i,
            }
        )
        if i >= 5:
            node2parent[f"n{i}"] = f"n{(i - 1) // 2}"
    return {"nodes": nodes, "node2parent": node2parent, "__version": "2"}

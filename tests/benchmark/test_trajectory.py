"""The AIDE journal parser: kinds, the best path, best-so-far, and bad input."""

import json

import pytest

from benchmark.trajectory import JournalError, parse_journal, parse_journal_text
from tests.support.journals import synthetic_journal


def test_250_nodes_kinds_best_path_and_curve():
    tree = parse_journal(synthetic_journal(250))
    assert len(tree.nodes) == 250
    by_id = {n.id: n for n in tree.nodes}
    assert by_id["n0"].kind == "draft" and by_id["n4"].kind == "draft"
    assert by_id["n7"].kind == "debug"  # parent n3 is buggy
    assert by_id["n5"].kind == "improve"  # parent n2 works
    assert tree.best == "n249"
    assert tree.maximize is True
    path = {n.id for n in tree.nodes if n.on_best_path}
    assert {"n249", "n124", "n61", "n30", "n14", "n6", "n2"} == path
    assert by_id["n2"].children[:2] == ["n5", "n6"]
    assert by_id["n0"].term_out == "out 0\ndone\n"
    metrics = [p["metric"] for p in tree.best_so_far]
    assert metrics == sorted(metrics) and tree.best_so_far[-1]["elapsed_s"] == 2490
    assert json.dumps(tree.as_dict())


def test_minimised_metric_and_parent_ids_and_children_forms():
    journal = {
        "nodes": [
            {"id": "a", "metric": {"value": 0.5, "maximize": False}, "is_buggy": False},
            {"id": "b", "parent": "a", "metric": {"value": 0.2, "maximize": False}},
            {"id": "c", "parent": {"id": "b"}, "metric": {"value": 0.9, "maximize": False}},
            {"id": "d", "children": ["e"], "is_buggy": True, "metric": None},
            {"id": "e", "term_out": "text", "metric": {"value": 0.1, "maximize": False}},
        ]
    }
    tree = parse_journal(journal)
    by_id = {n.id: n for n in tree.nodes}
    assert tree.best == "e"
    assert by_id["e"].kind == "debug" and by_id["e"].parent == "d"
    assert by_id["b"].kind == "improve" and by_id["c"].parent == "b"
    assert by_id["d"].on_best_path and not by_id["a"].on_best_path


def test_missing_fields_are_tolerated():
    tree = parse_journal({"nodes": [{}, {"id": "x", "parent": "ghost", "metric": "nan"}, 7]})
    assert [n.kind for n in tree.nodes] == ["draft", "draft"]
    assert tree.nodes[0].id == "node-0" and tree.nodes[0].is_buggy  # no metric: counted buggy
    assert tree.best is None and tree.best_so_far == []
    assert any("ghost" in w for w in tree.warnings)
    assert any("not objects" in w for w in tree.warnings)


def test_cycles_are_broken():
    tree = parse_journal({"nodes": [{"id": "a", "parent": "b"}, {"id": "b", "parent": "a"}]})
    assert any(n.parent is None for n in tree.nodes)
    assert any("loops" in w for w in tree.warnings)


@pytest.mark.parametrize("text", ["{not json", "", '{"nodes": 3}', '"a string"', "[" * 100_000])
def test_bad_json_is_a_clear_error(text):
    with pytest.raises(JournalError) as caught:
        parse_journal_text(text)
    assert "journal.json" in str(caught.value)

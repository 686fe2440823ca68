"""The pass@k axis labels every k for a few seeds and steps through many seeds, so that
its labels never run into each other (67 seeds would draw 67 labels)."""

from webapp.figures import pass_at_k_curves


def ticks(largest_k: int) -> int:
    figure = pass_at_k_curves(
        [("e", [{"k": k, "percentage": 50.0} for k in range(1, largest_k + 1)])]
    )
    step = figure["layout"]["xaxis"]["dtick"]
    return largest_k // step


def test_every_k_for_a_few_seeds_and_at_most_a_dozen_labels_otherwise():
    assert (
        pass_at_k_curves([("e", [{"k": 1, "percentage": 1.0}, {"k": 3, "percentage": 2.0}])])[
            "layout"
        ]["xaxis"]["dtick"]
        == 1
    )
    for largest in (5, 12, 13, 20, 67, 200, 1000):
        assert 1 <= ticks(largest) <= 12, largest

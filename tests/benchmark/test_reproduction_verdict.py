"""A reproduction's verdict per split: agrees inside the reproduction's 95% interval,
otherwise lower or higher by the difference in points."""

import pytest

from benchmark.reproduction import Z_95, SplitVerdict


def verdict(reported: float, reproduced: float, standard_error: float) -> SplitVerdict:
    difference = reproduced - reported
    return SplitVerdict(
        split="lite",
        reported=reported,
        reproduced=reproduced,
        reproduced_standard_error=standard_error,
        difference=difference,
        ci_lower=difference - 5,
        ci_upper=difference + 5,
        method="unpaired",
    )


@pytest.mark.parametrize(
    "reported, reproduced, standard_error, text",
    [
        (40.0, 40.0, 0.0, "reproduced: agrees"),
        (45.0, 40.0, 3.0, "reproduced: agrees"),  # 5 points inside ±5.88
        (40.0 + Z_95 * 2.0, 40.0, 2.0, "reproduced: agrees"),  # on the interval's edge
        (52.34, 40.0, 2.0, "reproduced: lower by 12.3 points"),
        (20.0, 27.5, 1.0, "reproduced: higher by 7.5 points"),
    ],
)
def test_the_verdict_reads_the_reproductions_interval(reported, reproduced, standard_error, text):
    assert verdict(reported, reproduced, standard_error).text == text


def test_the_verdicts_figures_travel_with_it():
    found = verdict(30.0, 20.0, 1.0).to_dict()
    assert found["agrees"] is False and found["verdict"] == "reproduced: lower by 10.0 points"
    assert found["reproduced_ci_lower"] == pytest.approx(20.0 - Z_95)
    assert found["reproduced_ci_upper"] == pytest.approx(20.0 + Z_95)
    assert (found["ci_lower"], found["ci_upper"]) == (-15.0, -5.0)

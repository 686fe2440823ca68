"""Numbers as people read them (``webapp.core.formatting``): to the metric's precision,
never float noise; a percentage's interval kept inside 0-100 and saying so."""

from webapp.core.formatting import format_score, shown_interval

# A score as float arithmetic leaves it: 0.137555 with noise in the last digits.
NOISY = 0.13755499999999998


# Numbers to the metric's precision, never float noise.


def test_format_score_drops_float_noise():
    assert format_score(NOISY) == "0.137555"
    assert format_score(0.8900000000000006) == "0.89"
    assert format_score(1234567.8) == "1234567.8"
    assert format_score(1.2345e-8) == "0.00000001235"
    assert format_score(None) == ""


# A percentage's interval stays in [0, 100]; the stored figures stay MLE-bench's.


def test_shown_interval_is_clipped_and_says_so():
    assert shown_interval({"ci_lower": 1.3, "ci_upper": 132.0}) == {
        "lower": 1.3,
        "upper": 100.0,
        "clipped": True,
    }
    assert shown_interval({"ci_lower": -4.0, "ci_upper": 20.0})["lower"] == 0.0
    assert shown_interval({"ci_lower": 10.0, "ci_upper": 20.0})["clipped"] is False

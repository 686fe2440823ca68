"""How scores and medal lines are printed: to the precision graded scores carry (six
decimals, more for tiny values), never with float noise (0.13755499999999998 -> 0.137555).
Pure: used by pages, table rows and figures' hover text. The API keeps raw values."""

import math

SCORE_DECIMALS = 6
SIGNIFICANT_DIGITS = 4  # a tiny value (1.2345e-08) keeps this many significant digits


def format_score(value) -> str:
    """``value`` printed to the metric's precision; "" for None, "nan"/"inf" as such."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(SCORE_DECIMALS, SIGNIFICANT_DIGITS - 1 - magnitude)
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def shown_interval(metric: dict | None) -> dict | None:
    """The 95% interval of a percentage as pages show it: MLE-bench's mean ± 1.96·SEM
    (stored unchanged, as published) clipped to [0, 100], with ``clipped`` saying so."""
    if not metric or metric.get("ci_lower") is None or metric.get("ci_upper") is None:
        return None
    lower, upper = metric["ci_lower"], metric["ci_upper"]
    shown_lower, shown_upper = max(0.0, lower), min(100.0, upper)
    return {
        "lower": shown_lower,
        "upper": shown_upper,
        "clipped": (shown_lower, shown_upper) != (lower, upper),
    }

"""How every page prints numbers, declared once: scores and medal lines to the precision
graded scores carry (six decimals, more for tiny values), never with float noise
(0.13755499999999998 -> 0.137555); percentages (Any Medal %, medal rates, percentiles) to
``PERCENT_DECIMALS``, rates given as fractions shown as percentages. Pure: used by the
template filters (``webapp/results/templatetags/numbers_format.py``), table rows and figures'
hover text; ``static/js/numbers.js`` is the same rules for what pages draw themselves. The
API keeps raw values."""

import math

SCORE_DECIMALS = 6
SIGNIFICANT_DIGITS = 4  # a tiny value (1.2345e-08) keeps this many significant digits
PERCENT_DECIMALS = 1  # every percentage on every page, published figures included


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


def format_scores_alike(values) -> list[str]:
    """Scores shown together (a leaderboard's medal lines) each to ``format_score``'s
    precision, then all to the same number of decimals: "0.8", "0.801234" ->
    "0.800000", "0.801234"; None stays ""."""
    texts = [format_score(v) for v in values]
    decimals = max(
        (len(t.partition(".")[2]) for t in texts if "." in t and "e" not in t), default=0
    )
    return [
        f"{v:.{decimals}f}"
        if decimals and isinstance(v, float) and math.isfinite(v) and "e" not in t
        else t
        for v, t in zip(values, texts, strict=True)
    ]


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


def _no_negative_zero(text: str) -> str:
    """-0.0 to one place is 0.0, not -0.0."""
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def format_percent(value, decimals: int = PERCENT_DECIMALS) -> str:
    """A percentage (0-100) to ``decimals`` places with its sign: "33.3%"; "" for None."""
    if value is None:
        return ""
    return format_percentage_number(value, decimals) + "%"


def format_percentage_number(value, decimals: int = PERCENT_DECIMALS) -> str:
    """A percentage (0-100) without its sign, as tables with a "%" heading print it:
    "33.3"; "" for None."""
    if value is None:
        return ""
    return _no_negative_zero(f"{value:.{decimals}f}")


def format_rate(value, decimals: int = PERCENT_DECIMALS) -> str:
    """A rate given as a fraction (0-1), as a percentage: 0.3333 -> "33.3%"; "" for None."""
    return "" if value is None else format_percent(100 * value, decimals)


def format_signed(value, decimals: int = 1) -> str:
    """A number with its sign: "+12.5", "-3.0", "0.0"; "" for None."""
    if value is None:
        return ""
    text = f"{value:+.{decimals}f}"
    return text[1:] if not text.strip("+-0.") else text


def format_points(value, decimals: int = 1) -> str:
    """A difference of percentages, signed: "+12.5 points"; "" for None."""
    return "" if value is None else f"{format_signed(value, decimals)} points"


def format_statistic(value, decimals: int = 2) -> str:
    """A correlation or other statistic to ``decimals`` places: "-0.12"; "" for None."""
    if value is None:
        return ""
    return _no_negative_zero(f"{value:.{decimals}f}")


def format_p(value) -> str:
    """A p-value as a sentence gives it: "p = 0.031", "p < 0.001"; "" for None."""
    if value is None:
        return ""
    text = format_p_value(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def format_p_value(value) -> str:
    """A p-value to two significant digits ("0.031", "0.51", "1"), "< 0.001" below that."""
    if value is None:
        return ""
    if value < 0.001:
        return "< 0.001"
    text = f"{value:.2g}"
    return text if "e" not in text else f"{value:.3f}"

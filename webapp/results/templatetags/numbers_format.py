"""The site's number formats as template filters (``{% load numbers_format %}``): every
page prints a number of a kind the same way (``webapp.core.formatting`` declares how).

    {{ grade.score|score }}          0.137555
    {{ metric.mean|pct }}            33.3        (a percentage, in a column headed "%")
    {{ metric.mean|percent }}        33.3%
    {{ row.a_medal_rate|rate }}      33.3%       (a fraction shown as a percentage)
    {{ check.similarity|stat }}      0.42
"""

from django import template

from webapp.core import formatting

register = template.Library()


@register.filter
def score(value) -> str:
    """A score or medal line to the metric's precision."""
    return formatting.format_score(value)


@register.filter
def pct(value) -> str:
    """A percentage (0-100) without its sign."""
    return formatting.format_percentage_number(_number(value))


@register.filter
def percent(value) -> str:
    """A percentage (0-100) with its sign."""
    return formatting.format_percent(_number(value))


@register.filter
def rate(value) -> str:
    """A fraction (0-1) as a percentage with its sign."""
    return formatting.format_rate(_number(value))


@register.filter
def stat(value, decimals: int = 2) -> str:
    """A similarity, correlation or other statistic to ``decimals`` places."""
    return formatting.format_statistic(_number(value), int(decimals))


def _number(value):
    """``value`` as a float, None when it is missing or not a number ("" prints as "")."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None

"""Template filters of ``webapp.wording``, built into every template: ``{{ when|ago }}``."""

from django import template

from webapp.wording import ago as _ago

register = template.Library()


@register.filter
def ago(moment) -> str:
    """``moment`` as "just now" or "3 minutes ago" (``webapp.wording.ago``)."""
    return _ago(moment)

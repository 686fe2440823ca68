"""Template filters of ``webapp.core.wording``, built into every template: ``{{ when|ago }}``."""

from django import template

from webapp.core.wording import ago as _ago

register = template.Library()


@register.filter
def ago(moment) -> str:
    """``moment`` as "just now" or "3 minutes ago" (``webapp.core.wording.ago``)."""
    return _ago(moment)

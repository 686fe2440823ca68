"""``{% visible_reproductions list user as name %}``: of an experiment page's
reproductions, those the viewer may see."""

from django import template

from webapp.agentsubs.selectors import shown_to

register = template.Library()


@register.simple_tag
def visible_reproductions(reproductions, user):
    return shown_to(user, reproductions or [])

"""The admin's "view on site" link (``/admin/r/<type>/<id>/``). Django answers it for any
staff member with a redirect to the object's page, whether or not they may see the object;
here an object ``webapp.core.visibility`` governs is 404 to whom may not see it."""

from django.contrib.contenttypes.models import ContentType
from django.contrib.contenttypes.views import shortcut
from django.http import Http404

from webapp.core.visibility import SEE, can_see


def view_on_site(request, content_type_id: int, object_id: str):
    content_type = ContentType.objects.filter(pk=content_type_id).first()
    model = content_type.model_class() if content_type is not None else None
    if model is not None and model._meta.label in SEE:
        try:
            obj = model._default_manager.filter(pk=object_id).first()
        except (ValueError, TypeError):
            obj = None
        if not can_see(request.user, obj):
            raise Http404("No such object.")
    return shortcut(request, content_type_id, object_id)

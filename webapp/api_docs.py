"""The API's schema and documentation pages: the schema readable in a browser (an HTML
page linking the docs and the schema as JSON, which browsers show; YAML for tools), and
Swagger UI and Redoc served from our own static files with a way back to the site."""

import functools

from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from drf_spectacular.renderers import OpenApiJsonRenderer
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView


class SchemaView(SpectacularAPIView):
    """``/api/schema/``: YAML for tools (as drf-spectacular serves it); ``?format=json``:
    indented JSON a browser displays; a browser asking with no format gets a page."""

    def perform_content_negotiation(self, request, force=False):
        # A browser's Accept matches no schema type: answer anyway (the page or JSON
        # below, else YAML) rather than 406.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        fmt = request.query_params.get("format")
        if fmt is None and "text/html" in request.META.get("HTTP_ACCEPT", ""):
            return render(request._request, "api/schema.html")
        if fmt == "json":
            generator = self.generator_class(
                urlconf=self.urlconf, api_version=self.api_version, patterns=self.patterns
            )
            schema = generator.get_schema(request=request, public=self.serve_public)
            body = OpenApiJsonRenderer().render(schema, renderer_context={"indent": 2})
            # Shown inline as JSON, never offered as a download.
            return HttpResponse(body, content_type="application/json; charset=utf-8")
        return super().get(request, *args, **kwargs)


swagger_view = SpectacularSwaggerView.as_view(
    url_name="api-schema", template_name="api/swagger_ui.html"
)
redoc_view = SpectacularRedocView.as_view(url_name="api-schema", template_name="api/redoc.html")

# Redoc's bundle draws "API docs by Redocly" with a logo fetched from Redocly's CDN; the
# site fetches nothing from elsewhere, so the bundle is served with the site's own icon.
REDOC_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


@functools.cache
def _redoc_bundle() -> bytes:
    with open(finders.find(REDOC_BUNDLE), "rb") as handle:
        text = handle.read().decode("utf-8")
    return text.replace(REDOC_CDN_LOGO, static("img/favicon.svg")).encode("utf-8")


@cache_control(public=True, max_age=86400)
def redoc_bundle(request):
    """Redoc's standalone bundle without its CDN logo."""
    return HttpResponse(_redoc_bundle(), content_type="text/javascript; charset=utf-8")

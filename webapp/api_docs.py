"""The API's schema and documentation pages: the schema readable in a browser (an HTML
page linking the docs and the schema as JSON, which browsers show; YAML for tools), and
Swagger UI and Redoc served from our own static files with a way back to the site."""

from django.http import HttpResponse
from django.shortcuts import render
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


class _PageOptions:
    """OPTIONS on a documentation page answers which methods it takes, with no body: DRF's
    metadata answer would go through the page's HTML renderer, which has no template for
    it (a 500 for Swagger UI)."""

    def options(self, request, *args, **kwargs):
        response = HttpResponse(status=200)
        response["Allow"] = ", ".join(self.allowed_methods)
        return response


class SwaggerView(_PageOptions, SpectacularSwaggerView):
    pass


class RedocView(_PageOptions, SpectacularRedocView):
    pass


swagger_view = SwaggerView.as_view(url_name="api-schema", template_name="api/swagger_ui.html")
redoc_view = RedocView.as_view(url_name="api-schema", template_name="api/redoc.html")

"""The API's schema and documentation pages: the schema readable in a browser (an HTML
page linking the docs and the schema as JSON, which browsers show; YAML for tools), and
Swagger UI and Redoc served from our own static files with a way back to the site."""

import functools
import re

from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.views.decorators.cache import cache_control
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
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


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """The API's one way to sign in, as the schema names it: ``Authorization: Token <key>``."""

    target_class = "webapp.accounts.tokens.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Token"
        )


# --- the error answers every operation may give -------------------------------------------

ERROR_BODY = {
    "type": "object",
    "description": "What went wrong, for a person: `detail` (DRF's errors), `error`, or "
    "the invalid fields with their messages.",
    "additionalProperties": True,
}
ERROR_MEANING = {
    "400": "Bad input: an invalid parameter or body, or a NUL character in the address.",
    "401": "The `Authorization: Token` header names no valid token.",
    "403": "Not allowed: sign in, or your account lacks the permission this needs.",
    "404": "Nothing here that you may see.",
    "413": "Too large.",
    "429": "Too many requests: wait as `Retry-After` says.",
}
_OPEN = ("AllowAny", "IsAuthenticatedOrReadOnly")
_PARAMETER = re.compile(r"\{[^}]*\}")


def _statuses(view, method: str, path: str) -> list[str]:
    """The error statuses an operation can answer, from its view: 400 and 401 for any
    (the NUL guard, a wrong token), 403 where its permission or CSRF can refuse, 404 where
    the path names an object, 429 where it is throttled, and what the view declares in
    ``error_statuses``."""
    statuses = ["400", "401"]
    permissions = [p.__name__ for p in view.permission_classes]
    if method != "get" or not all(name in _OPEN for name in permissions):
        statuses.append("403")
    if "{" in path:
        statuses.append("404")
    if getattr(view, "throttle_scope", None) or view.throttle_classes:
        statuses.append("429")
    statuses += [str(s) for s in getattr(view, "error_statuses", ())]
    return statuses


# No text the API takes holds NUL (``webapp.core.bad_input``): a 400 answers one.
NO_NUL = "^[^\\x00]*$"


def _without_nul(schema: dict, components: dict) -> None:
    """Give every free text of ``schema`` (a parameter's or a request body's) NO_NUL."""
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if schema.get("type") == "string" and not ({"enum", "format", "pattern"} & set(schema)):
        schema["pattern"] = NO_NUL
    for child in schema.get("properties", {}).values():
        _without_nul(child, components)
    if isinstance(schema.get("items"), dict):
        _without_nul(schema["items"], components)


def document_errors(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation documents the errors it can
    give (``_statuses``), each with an error body, so the schema matches every answer;
    and its text parameters and bodies say that they take no NUL."""
    components = result.get("components", {}).get("schemas", {})
    # The generator's paths name parameters as the URL does ({pk}); the schema's may not ({id}).
    views = {
        (_PARAMETER.sub("{}", path), method.lower()): callback.cls
        for path, _, method, callback in generator.endpoints
    }
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            view = views.get((_PARAMETER.sub("{}", path), method))
            if view is None:
                continue
            for parameter in operation.get("parameters", []):
                _without_nul(parameter.get("schema", {}), components)
            for content in operation.get("requestBody", {}).get("content", {}).values():
                _without_nul(content.get("schema", {}), components)
            responses = operation.setdefault("responses", {})
            for status in _statuses(view, method, path):
                response = responses.setdefault(
                    status, {"description": ERROR_MEANING.get(status, "Refused.")}
                )
                response.setdefault("content", {"application/json": {"schema": ERROR_BODY}})
    return result


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

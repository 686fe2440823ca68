"""The API's docs: the schema reads in a browser; Swagger and Redoc are served by the site
itself and link back to it."""

import re

import pytest
from django.templatetags.static import static
from django.urls import reverse

pytestmark = pytest.mark.django_db

# The schema reads in a browser; Swagger and Redoc come from this site and link back.


def test_schema_is_readable_in_a_browser(client):
    import json

    page = client.get(reverse("api-schema"), HTTP_ACCEPT="text/html,*/*;q=0.8")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert reverse("api-docs") in html and "?format=json" in html
    as_json = client.get(reverse("api-schema") + "?format=json", HTTP_ACCEPT="text/html")
    assert as_json.status_code == 200
    assert as_json["Content-Type"].startswith("application/json")
    assert "Content-Disposition" not in as_json
    body = as_json.content.decode()
    assert json.loads(body)["openapi"].startswith("3.") and '\n  "' in body  # indented
    # Tools asking without text/html keep getting YAML.
    tool = client.get(reverse("api-schema"))
    assert tool.content.decode().startswith("openapi:")


def test_swagger_and_redoc_are_local_and_link_back(client):
    for name in ("api-docs", "api-redoc"):
        html = client.get(reverse(name)).content.decode()
        assert 'id="site-bar"' in html and f'href="{reverse("home")}"' in html, name
        assert not re.search(r'(src|href)="https?://', html), name  # no CDN, no web fonts
    assert reverse("api-redoc-bundle") in client.get(reverse("api-redoc")).content.decode()
    # Redoc's bundle, served with the site's icon in place of its logo on Redocly's CDN.
    bundle = client.get(reverse("api-redoc-bundle"))
    assert bundle.status_code == 200 and bundle["Content-Type"].startswith("text/javascript")
    body = bundle.content.decode()
    assert "Redoc" in body and "cdn.redoc.ly" not in body and static("img/favicon.svg") in body
    # Browsers (the admin's pages name no icon) find /favicon.ico.
    assert client.get("/favicon.ico").url == static("img/favicon.svg")

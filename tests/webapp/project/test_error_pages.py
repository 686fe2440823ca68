"""The 404 and 500 pages in the site's layout; the 500 page needs no database and no
request."""

import pytest

pytestmark = pytest.mark.django_db


def test_404_page_has_the_site_layout(client, settings):
    settings.DEBUG = False
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="brand"' in html and 'id="not-found"' in html and "/no/such/page/" in html
    assert "Resolver404" not in html


def test_500_page_needs_no_database_nor_request(django_assert_num_queries, settings):
    from django.template.loader import render_to_string
    from django.test import RequestFactory
    from django.views.defaults import server_error

    settings.DEBUG = False
    with django_assert_num_queries(0):
        html = render_to_string("500.html")  # no request, no context processors
        response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    assert 'class="brand"' in html and 'id="server-error"' in html
    assert 'id="server-error"' in response.content.decode()

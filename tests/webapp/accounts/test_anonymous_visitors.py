"""What an anonymous visitor gets at every address: a page that needs an account sends
them to sign in and back (``?next=``), as Django's ``login_required`` does, never a page of
its own with a sign-in form; the API answers 401 or 403, never a redirect."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import URLResolver, get_resolver

pytestmark = pytest.mark.django_db

# Pages whose job is to let a person in (or out): they show the form themselves.
ACCOUNT_PAGES = ("/accounts/", "/admin/login/", "/admin/logout/")
PROTECTED = ("/status/", "/hosts/", "/integrity/", "/runs/new/", "/me/", "/runs/", "/uploads/")


def _addresses(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _addresses(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def every_address() -> list[str]:
    """Each route of the site with its parameters filled in (1 for numbers, x for text)."""
    found = set()
    for route in _addresses(get_resolver().url_patterns):
        if "(?P" in route or "\\" in route:
            continue  # the admin's regular expressions: its own login_required covers them
        address = re.sub(r"<int:\w+>", "1", route)
        address = re.sub(r"<(?:str|slug|path|uuid):\w+>", "x", address)
        found.add("/" + address.lstrip("^").rstrip("$"))
    return sorted(found)


def test_protected_pages_send_a_visitor_to_sign_in_and_back(client):
    for address in PROTECTED:
        response = client.get(address)
        assert response.status_code == 302, address
        target = urlsplit(response["Location"])
        assert target.path == "/accounts/login/", address
        assert parse_qs(target.query)["next"] == [address]


def test_no_address_answers_a_visitor_with_a_sign_in_form_of_its_own(client):
    addresses = every_address()
    assert len(addresses) > 100
    for address in addresses:
        response = client.get(address)
        if address.startswith("/api/"):
            assert response.status_code not in (301, 302), address
            continue
        if response.status_code != 200 or response.streaming:
            continue
        if address.startswith(ACCOUNT_PAGES):
            continue
        assert b'name="password"' not in response.content, address

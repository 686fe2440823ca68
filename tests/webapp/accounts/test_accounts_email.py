"""A password reset confirms an address only where it proves who reads it."""

import re

import pytest
from allauth.account.models import EmailAddress
from django.core import mail
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def open_sign_up(settings):
    settings.MLEBOARD_SIGNUP = "open"
    settings.ACCOUNT_RATE_LIMITS = False


def reset_password(client: Client, address: str, password: str) -> None:
    mail.outbox.clear()
    response = client.post("/accounts/password/reset/", {"email": address})
    assert response.status_code == 302, response.content[:400]
    (message,) = mail.outbox
    assert message.to == [address]
    link = re.search(r"http://\S+(/accounts/password/reset/key/\S+/)", message.body).group(1)
    form = client.get(link, follow=True)
    assert form.status_code == 200
    done = client.post(
        form.redirect_chain[-1][0] if form.redirect_chain else link,
        {"password1": password, "password2": password},
    )
    assert done.status_code == 302, done.content[:400]


def test_a_reset_does_not_confirm_an_address_of_someone_else(django_user_model):
    """The account adds the victim's address, unconfirmed, then resets its password
    through its own: the victim's address stays unconfirmed (and free to sign up with)."""
    mal = django_user_model.objects.create_user("mal", email="mal@example.org", password="x" * 12)
    EmailAddress.objects.create(user=mal, email="mal@example.org", verified=True, primary=True)
    EmailAddress.objects.create(user=mal, email="victim@example.org", verified=False)
    reset_password(Client(), "mal@example.org", "a-new-pass-phrase-1")
    assert not EmailAddress.objects.get(email="victim@example.org").verified
    assert EmailAddress.objects.get(email="mal@example.org").verified


def test_a_reset_confirms_the_one_address_it_was_mailed_to(django_user_model):
    nia = django_user_model.objects.create_user("nia", email="nia@example.org", password="x" * 12)
    EmailAddress.objects.create(user=nia, email="nia@example.org", verified=False, primary=True)
    reset_password(Client(), "nia@example.org", "a-new-pass-phrase-2")
    assert EmailAddress.objects.get(email="nia@example.org").verified


@pytest.mark.parametrize(
    ("backend", "says"),
    [
        ("django.core.mail.backends.console.EmailBackend", "terminal running"),
        ("django.core.mail.backends.locmem.EmailBackend", "spam folder"),
    ],
)
def test_the_page_after_sign_up_says_where_the_mail_is(settings, backend, says):
    settings.EMAIL_BACKEND = backend
    response = Client().post(
        "/accounts/signup/",
        {
            "email": "ana@example.org",
            "username": "ana",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert says in response.content.decode()

from django.conf import settings

from webapp.accounts.signup import how_to_get_an_account, signup_mode

_CONSOLE = "django.core.mail.backends.console.EmailBackend"


def signup(request) -> dict:
    """Whether the navigation offers "Sign up", and what the sign-in page says about
    getting an account, and whether mail is printed on the server's output (the console
    backend, as under ``make run``) rather than sent."""
    return {
        "signup_mode": signup_mode(),
        "how_to_get_an_account": how_to_get_an_account(),
        "mail_on_console": settings.EMAIL_BACKEND == _CONSOLE,
    }

"""What browser tests do in a page (Playwright driving the system Chromium): sign in,
take a screenshot into test-artifacts/ for a person to look at."""

from pathlib import Path

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sign_in(page, live_server, username: str, password: str) -> None:
    """Sign in through the site's form; returns when the page says who is signed in."""
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("main form button[type=submit]")
    page.wait_for_selector("header.top button.link", state="attached", timeout=10000)


def sign_in_to(page, live_server, username, password, then="/"):
    """Sign in through the login form and land on ``then``."""
    page.goto(live_server.url + "/accounts/login/?next=" + then)
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form button[type=submit]")
    page.wait_for_url(live_server.url + then)

"""Talking to an mleboard site over HTTP: where the token comes from, and the few API calls
``mleboard submit`` and ``mleboard login`` make. No Django here: only ``requests``."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from urllib.parse import urlsplit

import requests

from config import env

TOKEN_ENV = "MLEBOARD_TOKEN"
TIMEOUT = (10, 60)  # connect, read (seconds)


class SiteError(Exception):
    """The site refused or could not be reached; the message says what to do."""

    def __init__(self, message: str, *, unreachable: bool = False):
        super().__init__(message)
        self.unreachable = unreachable


def config_dir() -> Path:
    return Path(env("XDG_CONFIG_HOME") or Path.home() / ".config") / "mleboard"


def cache_dir() -> Path:
    return Path(env("XDG_CACHE_HOME") or Path.home() / ".cache") / "mleboard"


def normalise_site(url: str) -> str:
    """``https://host[:port][/prefix]`` without a trailing slash; SiteError if it is not an
    http(s) address."""
    url = (url or "").strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SiteError(
            f"--site must be the site's address, like https://mleboard.example.org (got {url!r})"
        )
    return url


def _credentials_file() -> Path:
    return config_dir() / "credentials.json"


def saved_tokens() -> dict[str, str]:
    path = _credentials_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_token(site: str, token: str) -> Path:
    """Keep ``token`` for ``site`` in the user's config folder, readable by them only."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, stat.S_IRWXU)
    tokens = saved_tokens()
    tokens[site] = token
    path = _credentials_file()
    temp = path.with_suffix(".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(tokens, handle, indent=2)
    os.chmod(temp, 0o600)
    os.replace(temp, path)
    return path


def _site_file() -> Path:
    return config_dir() / "site"


def save_site(site: str) -> None:
    """Remember ``site`` (the last one ``mleboard login`` was given) for commands given none."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    temp = _site_file().with_suffix(".tmp")
    temp.write_text(site + "\n", encoding="utf-8")
    os.replace(temp, _site_file())


def resolve_site(given: str | None) -> str:
    """The site's address: ``--site``, else the one ``mleboard login`` was last given.
    SiteError when there is neither, or the address is not one."""
    if given:
        return normalise_site(given)
    try:
        saved = _site_file().read_text(encoding="utf-8").strip()
    except OSError:
        saved = ""
    if not saved:
        raise SiteError(
            "say which site: --site URL (e.g. https://mleboard.example.org), or run "
            "`mleboard login --site URL` once and it is remembered"
        )
    return normalise_site(saved)


def resolve_token(site: str, given: str | None) -> tuple[str | None, str]:
    """The token to use and where it came from: ``--token``, else ``$MLEBOARD_TOKEN``,
    else the file ``mleboard login`` wrote for this site."""
    if given:
        return given.strip(), "--token"
    if token := env(TOKEN_ENV):
        return token, f"${TOKEN_ENV}"
    saved = saved_tokens().get(site)
    return (saved, str(_credentials_file())) if saved else (None, "")


class Site:
    def __init__(self, url: str, token: str | None):
        self.url = normalise_site(url)
        self.token = token
        self.session = requests.Session()
        if token:
            self.session.headers["Authorization"] = f"Token {token}"

    def absolute(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}{path}"

    def get(self, path: str) -> dict:
        try:
            response = self.session.get(self.absolute(path), timeout=TIMEOUT)
        except requests.RequestException as error:
            raise SiteError(
                f"could not reach {self.url} ({error.__class__.__name__}): check the address "
                "and your connection, then try again",
                unreachable=True,
            ) from None
        if response.status_code in (401, 403):
            raise SiteError(refused_token_message(self.url))
        if response.status_code >= 400:
            raise SiteError(f"{self.url} answered {response.status_code}: {error_text(response)}")
        try:
            return response.json()
        except ValueError:
            raise SiteError(
                f"{self.url} did not answer with JSON: is it an mleboard site?"
            ) from None

    def check_token(self) -> None:
        """SiteError unless the token is accepted (the unfinished-uploads list needs it)."""
        self.get("/api/uploads/tus/")


def refused_token_message(site: str) -> str:
    return (
        f"{site} refused the token (revoked, mistyped, or for another site): make a new one "
        f"at {site}/accounts/tokens/ and run `mleboard login --site {site}`, or pass --token"
    )


def error_text(response) -> str:
    """The ``error`` a site's JSON answer gives, else its first line."""
    try:
        body = response.json()
    except ValueError:
        return (response.text or "").strip().splitlines()[0][:300] if response.text else ""
    if isinstance(body, dict):
        return str(body.get("error") or body.get("detail") or body)
    return str(body)[:300]

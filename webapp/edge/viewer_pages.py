"""The public pages for signed-in people, from the page cache (``webapp.edge.page_cache``).

A signed-in page differs from a visitor's in its navigation (name, links, sign-out form
and CSRF token) and in what the person may see. So it is stored in parts: the navigation,
marked in ``base.html``, rendered for each request; the rest stored once per *viewer
class* (those who own nothing and hold no permission share the visitors' copy; anyone else
has their own, depending on their private work and, with a permission, every private
change). The class is read from the database on every request. Pages holding a CSRF token,
or rendered while messages wait, are never stored. Parts are raw deflate, sent as one gzip
around the fresh navigation. In full: docs/operate.md.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import struct
import threading
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass

from django.apps import apps
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.messages.storage.session import SessionStorage
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.http import HttpResponse
from django.middleware.csrf import get_token
from django.template.loader import get_template
from django.utils.cache import patch_vary_headers
from django.utils.crypto import constant_time_compare

from webapp.core import visibility
from webapp.edge import page_cache
from webapp.edge.page_cache import routes

log = logging.getLogger(__name__)

NAV = "nav"
_START, _END = "<!--viewer:{}-->", "<!--/viewer:{}-->"
# Templates of the parts rendered for each request, by the name of their marker.
TEMPLATES = {NAV: "viewer_nav.html"}
CACHE_CONTROL = "private, no-cache"
# A stored part that carries the person's CSRF token (a form of the page's own).
_TOKEN = b'name="csrfmiddlewaretoken"'
# Permissions that show a person other people's private rows: their pages depend on
# every private change.
_SEES_PRIVATE = tuple({rule.see_all for rule in visibility.SEE.values() if rule.owner is not None})


# --- Who is viewing ---------------------------------------------------------------------------

# Scopes of this module's own: a person's permissions, user row and ownership
# (``viewer:<id>``), and every group's permissions (``viewers``).
VIEWERS = "viewers"


def viewer_scope(user_id: int) -> str:
    return f"viewer:{user_id}"


@functools.cache
def _owned_models() -> tuple:
    """The models a person owns directly (``visibility.SEE``'s owner lookups without a
    hop); owning any of them may change what a page shows them."""
    models = []
    for label, rule in visibility.SEE.items():
        model = apps.get_model(label)
        if rule.owner and "__" not in rule.owner and not model._meta.proxy:
            models.append((model, rule.owner))
    return tuple(models)


@dataclass(frozen=True)
class ViewerClass:
    name: str  # "signed-in", or "user:<id>:<digest of the permissions>"
    scopes: tuple[str, ...]  # beyond a visitor's: owner:<id>, private
    permissions: frozenset[str]


@dataclass(frozen=True)
class UserState:
    """What of a person's user row and ownership decides whether a stored page may be
    served to them and which: read in one query on every request, since bulk updates
    (``.update(is_active=False)``, a new password) send no signal."""

    is_active: bool
    password: str
    # The rest of ROW_FLAGS, as the row holds them: a change of any is a new state.
    flags: tuple
    owns_any: bool


# The user row's flags that change what a page shows a person: the admin link in the
# navigation (Django lets only staff into the admin) and every permission (a superuser).
ROW_FLAGS = ("is_staff", "is_superuser")


def user_state(user_id: int) -> UserState | None:
    """The person's state as the database holds it now; None once they are gone."""
    from django.contrib.auth import get_user_model

    owned = _owned_models()
    row = (
        get_user_model()
        .objects.filter(pk=user_id)
        .annotate(
            **{
                f"owns_{i}": Exists(model._default_manager.filter(**{field: OuterRef("pk")}))
                for i, (model, field) in enumerate(owned)
            }
        )
        .values_list(
            "is_active",
            "password",
            *ROW_FLAGS,
            *(f"owns_{i}" for i in range(len(owned))),
        )
        .first()
    )
    if row is None:
        return None
    flags = row[2 : 2 + len(ROW_FLAGS)]
    return UserState(row[0], row[1], flags, owns_any=any(row[2 + len(ROW_FLAGS) :]))


def viewer_class(user, state: UserState | None = None) -> ViewerClass:
    """``user``'s class of viewers (see the module's docstring), asked of the database:
    their permissions (as ``user.get_all_permissions``), and whether they own anything
    (``state``'s, read now when not given)."""
    permissions = frozenset(user.get_all_permissions())
    state = state or user_state(user.pk)
    owns_any = bool(state and state.owns_any)
    scopes: list[str] = []
    if owns_any:
        scopes.append(routes.owner_scope(user.pk))
    # (A superuser's permissions are every permission.)
    if set(_SEES_PRIVATE) & permissions:
        scopes.append(routes.PRIVATE)
    if not (owns_any or permissions):
        return ViewerClass("signed-in", (), permissions)
    digest = hashlib.blake2b(
        "\n".join(sorted(permissions)).encode(),
        digest_size=8,
    ).hexdigest()
    return ViewerClass(f"user:{user.pk}:{digest}", tuple(scopes), permissions)


@dataclass(frozen=True)
class Viewer:
    """A signed-in person as this module serves them: their class, the user row, the
    state it was read in and their navigation (rendered once, with a stand-in for the
    CSRF token)."""

    kind: ViewerClass
    user: object
    nav: str
    state: UserState


_TOKEN_STAND_IN = "csrf-token-stand-in"


class _Viewers:
    """This process's ``Viewer`` of each person, each valid while the versions it was
    made under stand (the catalogue's, every group's, the person's own, which any save of
    their user row replaces: a new password, flags, deletion). Bounded in count and in
    the bytes of their navigations, least recently used out first."""

    MAX = 10_000
    MAX_BYTES = 8 * 1024**2

    def __init__(self) -> None:
        self.entries: OrderedDict[int, tuple[tuple, Viewer]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def _put(self, user_id: int, versions: tuple, viewer: Viewer) -> None:
        with self.lock:
            old = self.entries.pop(user_id, None)
            if old is not None:
                self.size -= len(old[1].nav)
            self.entries[user_id] = (versions, viewer)
            self.size += len(viewer.nav)
            while len(self.entries) > self.MAX or self.size > self.MAX_BYTES:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.size -= len(dropped.nav)

    def get(self, request, user_id: int, versions: tuple) -> Viewer | None:
        """The viewer of ``request``'s session, or None when it signs nobody in. The
        person's row is read on every request (``user_state``): a copy made before a bulk
        update is not used after it."""
        state = user_state(user_id)
        if state is None or not state.is_active:
            return None
        with self.lock:
            found = self.entries.get(user_id)
            if found is not None and found[0] == versions:
                self.entries.move_to_end(user_id)
        if (
            found is not None
            and found[0] == versions
            and found[1].state == state
            and _session_holds(request, found[1].user)
        ):
            viewer = found[1]
            # This request's own copy of the user row (Django's ModelBackend caches the
            # permissions on it: ``can.*`` is answered without asking the database).
            request.user = copy.copy(viewer.user)
            request.user._perm_cache = set(viewer.kind.permissions)
            return viewer
        user = request.user  # Django's own reading of the session (the database)
        if not user.is_authenticated or user.pk != user_id:
            return None
        kind = viewer_class(user, state)
        user._perm_cache = set(kind.permissions)
        nav = get_template(TEMPLATES[NAV]).render({"csrf_token": _TOKEN_STAND_IN}, request)
        viewer = Viewer(kind, copy.copy(user), nav, state)
        self._put(user_id, versions, viewer)
        return viewer

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.size = 0


def _session_holds(request, user) -> bool:
    """Whether the session signs in ``user`` as Django's ``auth.get_user`` would decide
    on its first path (the backend allowed, the user active, the session's hash that of
    their password); anything else goes through Django's own reading."""
    session = request.session
    stored = session.get(HASH_SESSION_KEY)
    return bool(
        session.get(BACKEND_SESSION_KEY) in settings.AUTHENTICATION_BACKENDS
        and user.is_active
        and stored
        and constant_time_compare(stored, user.get_session_auth_hash())
    )


_viewers = _Viewers()


def forget_classes() -> None:
    """Drop this process's viewers (with the page cache's ``clear``)."""
    _viewers.clear()


def _scopes(found: routes.Match, user_id: int) -> tuple[str, ...]:
    return (
        found.scope,
        VIEWERS,
        viewer_scope(user_id),
        routes.owner_scope(user_id),
        routes.PRIVATE,
    )


def _page_versions(
    found: routes.Match, request, user_id: int
) -> tuple[tuple, Viewer | None, tuple]:
    """One read of every version a signed-in page may depend on: the versions its entry
    is stored under, the person viewing, and every version read (to tell, after a
    rendering, whether any moved meanwhile)."""
    read = page_cache.current_versions(*_scopes(found, user_id))
    catalogue, page, viewers, viewer, owner, private = read
    person = _viewers.get(request, user_id, (catalogue, viewers, viewer))
    if person is None:
        return (), None, read
    by_scope = {routes.owner_scope(user_id): owner, routes.PRIVATE: private}
    return (catalogue, page, *(by_scope[scope] for scope in person.kind.scopes)), person, read


def _still_of_its_class(found: routes.Match, user_id: int, viewer: Viewer, read: tuple) -> bool:
    """After a rendering: whether what it was rendered for still holds, so that the page
    may be stored for the viewer's class. A person who owned nothing shares their class's
    copy; if they made private work while the page rendered, the rendering may show it,
    and it must not be stored for the others of the class. Asked twice: the versions (a
    change lands in the cache just after its commit) and the database itself (for the
    moment between)."""
    if page_cache.current_versions(*_scopes(found, user_id)) != read:
        return False
    return user_state(user_id) == viewer.state


def _bump_viewers(user_ids) -> None:
    ids = {pk for pk in user_ids if pk is not None}
    if ids:
        transaction.on_commit(lambda: page_cache.bump(viewer_scope(pk) for pk in ids))


def _user_saved(sender, instance, **kwargs) -> None:
    _bump_viewers([instance.pk])  # staff and superuser flags, active or not


def _user_permissions_changed(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    if not action.startswith("post_"):
        return
    if not reverse:
        _bump_viewers([instance.pk])
    elif pk_set is None:  # a permission or group cleared of all its people
        transaction.on_commit(lambda: page_cache.bump([VIEWERS]))
    else:
        _bump_viewers(pk_set)


def _group_permissions_changed(sender, action, **kwargs) -> None:
    if action.startswith("post_"):
        transaction.on_commit(lambda: page_cache.bump([VIEWERS]))


def _owned_row_changed(sender, instance, created=False, **kwargs) -> None:
    """A person's first or last row of a kind changes their class; any new or deleted row
    is counted (a change of owner is an admin edit, which replaces every version)."""
    if created or kwargs.get("signal") is post_delete:
        field = _owner_fields.get(sender)
        if field:
            _bump_viewers([getattr(instance, f"{field}_id", None)])


_owner_fields: dict = {}


def connect() -> None:
    """Changes that move a person to another class of viewers replace their version."""
    from django.contrib.auth.models import Group, User

    page_cache.on_clear(forget_classes)

    post_save.connect(_user_saved, sender=User, dispatch_uid="viewer-pages-user")
    post_delete.connect(_user_saved, sender=User, dispatch_uid="viewer-pages-user-deleted")
    for through in (User.user_permissions.through, User.groups.through):
        m2m_changed.connect(
            _user_permissions_changed,
            sender=through,
            dispatch_uid=f"viewer-pages-{through._meta.label}",
        )
    m2m_changed.connect(
        _group_permissions_changed,
        sender=Group.permissions.through,
        dispatch_uid="viewer-pages-group-permissions",
    )
    post_delete.connect(
        lambda sender, **kwargs: transaction.on_commit(lambda: page_cache.bump([VIEWERS])),
        sender=Group,
        weak=False,
        dispatch_uid="viewer-pages-group-deleted",
    )
    for model, field in _owned_models():
        _owner_fields[model] = field
        for signal in (post_save, post_delete):
            signal.connect(
                _owned_row_changed,
                sender=model,
                dispatch_uid=f"viewer-pages-{signal is post_save}-{model._meta.label}",
            )


# --- Which requests -----------------------------------------------------------------------


def _messages_waiting(request) -> bool:
    return (
        CookieStorage.cookie_name in request.COOKIES
        or SessionStorage.session_key in request.session
    )


def eligible(request) -> tuple[routes.Match, int] | None:
    """The route of a request for a public page this module serves and the id of the
    user its session names (not yet checked), else None."""
    if not (
        page_cache.enabled()
        and request.method in ("GET", "HEAD")
        and "HTTP_AUTHORIZATION" not in request.META
        and settings.SESSION_COOKIE_NAME in request.COOKIES
    ):
        return None
    found = routes.match(request.path_info)
    if found is None or found.route.api or _messages_waiting(request):
        return None
    try:
        user_id = int(request.session.get(SESSION_KEY, ""))
    except (TypeError, ValueError):
        return None
    return found, user_id


# --- The parts ----------------------------------------------------------------------------


def split(content: str) -> list[str] | None:
    """The page cut at its viewer markers: text, marker name, text, …; None when a text
    part may not be stored."""
    parts: list[str] = []
    rest = content
    while True:
        names = [name for name in TEMPLATES if _START.format(name) in rest]
        if not names:
            parts.append(rest)
            break
        name = min(names, key=lambda n: rest.index(_START.format(n)))
        head, _, tail = rest.partition(_START.format(name))
        _, found, rest = tail.partition(_END.format(name))
        if not found:
            return None
        parts += [head + _START.format(name), name]
        rest = _END.format(name) + rest
    texts = parts[::2]
    if any(_TOKEN in text.encode() for text in texts):
        return None
    return parts


def _deflate(data: bytes) -> bytes:
    """Raw deflate of ``data``, ended at a byte boundary with no final block, so that
    such pieces concatenate into one stream."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_FINAL_BLOCK = b"\x03\x00"  # an empty final block


def _gzip(pieces: list[tuple[bytes, bytes]]) -> bytes:
    """One gzip member of the pieces, each given as (bytes, their ``_deflate``)."""
    crc, size = 0, 0
    for raw, _ in pieces:
        crc = zlib.crc32(raw, crc)
        size += len(raw)
    return b"".join(
        [_GZIP_HEADER, *(deflated for _, deflated in pieces), _FINAL_BLOCK]
        + [struct.pack("<II", crc & 0xFFFFFFFF, size & 0xFFFFFFFF)]
    )


def _entry(versions: tuple, headers: list, parts: list[str]) -> tuple:
    stored = []
    for i, part in enumerate(parts):
        if i % 2:
            stored.append(part)
        else:
            raw = part.encode()
            stored.append((raw, _deflate(raw)))
    texts = stored[::2]
    etag = hashlib.blake2b(b"".join(raw for raw, _ in texts), digest_size=16).hexdigest()
    size = sum(len(raw) + len(deflated) for raw, deflated in texts)
    # The page cache's shape (versions, etag, headers, content, extra): here the parts
    # and their size in bytes.
    return (versions, etag, headers, tuple(stored), size)


def _valid(entry) -> bool:
    return isinstance(entry, tuple) and len(entry) == 5 and isinstance(entry[3], tuple)


def _respond(request, viewer: Viewer, entry: tuple, state: str, started: float) -> HttpResponse:
    _, etag, headers, stored, _ = entry
    pieces: list[tuple[bytes, bytes]] = []
    rendered = []
    for i, part in enumerate(stored):
        if i % 2:
            rendered.append(viewer.nav.encode())  # NAV, the one part of this kind
            raw = viewer.nav.replace(_TOKEN_STAND_IN, get_token(request)).encode()
            pieces.append((raw, _deflate(raw)))
        else:
            pieces.append(part)
    # The token's mask is new in each response; the copy a browser holds stays good.
    same = b"\0".join(rendered)
    etag = hashlib.blake2b(etag.encode() + same, digest_size=16).hexdigest()
    gzipped = bool(page_cache.ACCEPTS_GZIP.search(request.META.get("HTTP_ACCEPT_ENCODING", "")))
    body = _gzip(pieces) if gzipped else b"".join(raw for raw, _ in pieces)
    response = HttpResponse(body)
    for name, value in headers:
        response[name] = value
    if gzipped:
        response["Content-Encoding"] = "gzip"
    response["ETag"] = f'"{etag}{"-gzip" if gzipped else ""}"'
    response["Content-Length"] = str(len(body))
    _finish(response, state, started)
    return page_cache.conditional(request, response)


def _finish(response, state: str, started: float) -> None:
    response["Cache-Control"] = CACHE_CONTROL
    patch_vary_headers(response, ("Cookie", "Authorization", "Accept-Encoding"))
    response["X-Page-Cache"] = state
    response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"


class ViewerPageMiddleware:
    """Serves and stores the public pages of signed-in people (see the module's
    docstring). After the authentication and messages middleware."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        asked = eligible(request)
        if asked is None:
            return self.get_response(request)
        found, user_id = asked
        started = time.perf_counter()
        try:
            page_cache.ensure_bounded()
            versions, viewer, read = _page_versions(found, request, user_id)
            if viewer is None:
                return self.get_response(request)
            key = f"{page_cache.canonicalize(request, found)}:viewer:{viewer.kind.name}"
            group = f"{request.path_info}:viewer:{viewer.kind.name}"
            entry = page_cache.stored(key, versions, group)
        except Exception:
            log.exception("viewer pages: unavailable, rendering")
            return self.get_response(request)
        if _valid(entry) and entry[0] == versions:
            return _respond(request, viewer, entry, "viewer-hit", started)
        response = self.get_response(request)
        if not page_cache.storable(request, response, token_used=True):
            return response
        parts = split(response.content.decode(response.charset or "utf-8", "replace"))
        if parts is None:
            return response
        headers = [
            (header, value)
            for header, value in response.items()
            if header.lower() not in page_cache.SKIPPED_HEADERS
            and header.lower() not in ("vary", "x-page-cache")
        ]
        entry = _entry(versions, headers, parts)
        try:
            if _still_of_its_class(found, user_id, viewer, read):
                page_cache.keep(key, entry, group)
        except Exception:
            log.exception("viewer pages: could not store %s", request.path_info)
        return _respond(request, viewer, entry, "viewer-miss", started)

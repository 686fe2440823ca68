"""Nothing private is said to whom may not see it, on any route.

Private markers are planted in every name, file and reference: alice's unpublished
experiment (its name, agent, run group, archive, code file name and code, logs, her agent
run's output, the addresses of its pages) and a competition's reference code (its file
names, sources, code, note, archive). bob's published run copies both, so its integrity
check names them as facts. Every route of the URLconf (enumerated, so a new route is
walked too; admin included) is asked for, with every planted id and file, as anonymous,
bob (the checked run's owner), carol (another user), staff without permissions and a
reviewer; each response (body, headers, the files inside a zip) must hold only the
markers that person may see, and the reviewer must find every one, or the planting is
broken. The page cache is on; the addresses it serves are walked anonymously once more,
answered from it."""

from __future__ import annotations

import io
import re
import uuid
import zipfile
from itertools import product

import pytest
from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern

from benchmark.failures import FAILURE_KEYS
from tests.support.planted import OWNER, REFERENCES
from webapp.edge import page_cache
from webapp.edge.page_cache import routes as page_cache_routes
from webapp.integrity.models import ReferenceCorpus, ReferenceFile, RunCheck
from webapp.results.models import Experiment, GradeReport, PartialUpload, Run, Upload
from webapp.runs.models import AgentRun, Launch

pytestmark = pytest.mark.django_db
COMPETITION = "spaceship-titanic"


# ---------------------------------------------------------------- the routes


def _patterns(patterns, namespace=None):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry.url_patterns, entry.namespace or namespace)
        elif isinstance(entry, URLPattern) and entry.name:
            yield (f"{namespace}:{entry.name}" if namespace else entry.name), entry


def _params(entry: URLPattern) -> list[str]:
    if isinstance(entry.pattern, RoutePattern):
        return list(entry.pattern.converters)
    return list(entry.pattern.regex.groupindex)


# Query strings that make a route say more (placeholders filled per object).
QUERIES = {
    "compare": ["?experiments={alice_experiment},{bob_experiment}"],
    "api-compare": ["?experiments={alice_experiment},{bob_experiment}"],
    "home": ["?format=json", "?format=csv"],
    "api-run-search-result": ["?file=code/privmark_solution.py&q=import", "?file=logs/run.log&q=t"],
    "api-run-search-agent": ["?file=logs/PRIVMARKAGENT.log&q=P", "?file=run.log&q=a"],
    "api-run-timeline-result": ["?file=logs/run.log"],
    "api-run-timeline-agent": ["?file=logs/events.jsonl"],
    "api-run-trajectory-result": ["?compact=1"],
}
HIGHLIGHTED = ("api-run-file-result", "api-run-file-agent")  # code files: also ?highlight=1


# The objects a route's id most likely names, by a word of its name (the ids of every
# planted object for a route none of these words names).
HINTS = (
    ("agent", AgentRun),
    ("run", Run),
    ("experiment", Experiment),
    ("upload", Upload),
    ("launch", Launch),
)


def routes(planted) -> list[str]:
    """Every named route of the URLconf, filled with every planted id, file and
    competition (admin routes with the ids of their model's planted objects)."""
    alice_run, bob_run, agent_run = planted["alice_run"], planted["bob_run"], planted["agent_run"]
    ids = sorted(
        {
            alice_run.pk,
            bob_run.pk,
            alice_run.experiment_id,
            bob_run.experiment_id,
            agent_run.pk,
            agent_run.launch_id,
            *Upload.objects.values_list("pk", flat=True),
            *RunCheck.objects.values_list("pk", flat=True),
        }
    )
    planted_objects = {
        model: list(model.objects.values_list("pk", flat=True))
        for model in (Experiment, Run, GradeReport, Upload, Launch, AgentRun, RunCheck)
        + (ReferenceCorpus, ReferenceFile, type(planted["users"]["alice"]))
    }
    content_types = [
        (ContentType.objects.get_for_model(model).pk, pk)
        for model, pks in planted_objects.items()
        for pk in pks
    ]
    placeholders = {
        "alice_experiment": alice_run.experiment_id,
        "bob_experiment": bob_run.experiment_id,
    }
    values = {
        "slug": [COMPETITION],
        "fmt": ["json", "csv"],
        "path": planted["files"],
        "app_label": sorted({m._meta.app_label for m in admin.site._registry}),
        "url": ["nothing-here/"],
    }
    # Parameters that are not object ids, by route: each route's own kind of value.
    route_values = {
        "experiment-failure-runs": {"key": sorted(FAILURE_KEYS)},
        "api-tus-upload": {
            "key": [*PartialUpload.objects.values_list("key", flat=True), uuid.UUID(int=1)]
        },
        "invite-accept": {"key": ["nothing-here"]},
        "token-revoke": {"token_id": ["nothing-here"]},
    }
    urls = []
    for name, entry in _patterns(get_resolver().url_patterns):
        params = _params(entry)
        own_values = {**values, **route_values.get(name, {})}
        model_admin = getattr(entry.callback, "model_admin", None)
        if model_admin is not None:
            own_ids = planted_objects.get(model_admin.model) or ids
        else:
            own_ids = next((planted_objects[m] for word, m in HINTS if word in name), ids)
        choices = []
        for param in params:
            if param == "content_type_id":
                continue  # filled with object_id, below
            if param in own_values:
                choices.append([(param, v) for v in own_values[param]])
            elif param == "object_id" and "content_type_id" in params:
                choices.append([("pair", pair) for pair in content_types])
            else:
                choices.append([(param, i) for i in own_ids])
        for combination in product(*choices):
            kwargs = {}
            for param, value in combination:
                if param == "pair":
                    kwargs["content_type_id"], kwargs["object_id"] = value
                else:
                    kwargs[param] = value
            url = reverse(name, kwargs=kwargs)
            urls.append(url)
            for query in QUERIES.get(name, []):
                urls.append(url + query.format(**placeholders))
            if name in HIGHLIGHTED and url.endswith(".py"):
                urls.append(url + "?highlight=1")
    return list(dict.fromkeys(urls))


def _texts(response) -> list[str]:
    """What a response says: its headers and body, and the names and contents of the
    files of a zip."""
    body = (
        b"".join(response.streaming_content)
        if getattr(response, "streaming", False)
        else response.content
    )
    texts = [
        "\n".join(f"{k}: {v}" for k, v in response.headers.items()),
        body.decode("utf-8", "replace"),
    ]
    if body[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            for info in archive.infolist():
                texts.append(info.filename)
                texts.append(archive.read(info).decode("utf-8", "replace"))
    return texts


def _holds(text: str, marker: str) -> bool:
    """A marker in the text; an address whole (``/runs/1/`` is not in ``/api/runs/1/``)."""
    if marker.startswith("/"):
        return re.search(r"(?<![\w-])" + re.escape(marker), text) is not None
    return marker in text


def walk(client: Client, urls: list[str], markers: list[str]) -> tuple[dict, list[str], int]:
    """Where each marker was found ({marker: [url, ...]}, a marker in the address asked
    for does not count), the addresses that answered a 5xx, and how many answers came
    from the page cache."""
    found: dict[str, list[str]] = {}
    errors = []
    cached = 0
    for url in urls:
        response = client.get(url)
        cached += response.headers.get("X-Page-Cache") in ("hit", "viewer-hit")
        if response.status_code >= 500:
            errors.append(f"{response.status_code} {url}")
            continue
        said = "\n".join(_texts(response))
        for marker in markers:
            if _holds(said, marker) and not _holds(url, marker):
                found.setdefault(marker, []).append(url)
    return found, errors, cached


@pytest.mark.slow
def test_no_route_says_what_its_viewer_may_not_see(planted, settings):
    settings.MLEBOARD_PAGE_CACHE = True
    # The pages' versions (and sessions) in this process's memory: a worker or site that
    # another test left running must not replace them while the walks count hits.
    settings.CACHES = {
        **settings.CACHES,
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "visibility-leak-walk",
        },
    }
    page_cache.clear()
    users = planted["users"]
    urls = routes(planted)
    assert len(urls) > 250  # the whole URLconf, admin included
    cacheable = [u for u in urls if page_cache_routes.match(u.split("?")[0])]
    experiment, hers = planted["experiment"], planted["hers"]
    markers = experiment + hers + REFERENCES
    people = {  # who, signed in as, walking, may read
        "anonymous": (None, urls, set()),
        "bob (owner of the checked run)": (users["bob"], urls, set()),
        "carol (another user)": (users["carol"], urls, set()),
        "staff without permissions": (users["staff"], urls, set()),
        "reviewer": (users["reviewer"], urls, set(experiment + REFERENCES)),
        "alice (owner of the private work)": (users["alice"], urls, set(experiment + hers)),
        # Signed-in pages come from the cache too (webapp.edge.viewer_pages): each class of
        # viewers its own copy; carol's class is everyone's who owns nothing.
        "reviewer, from the page cache": (
            users["reviewer"],
            cacheable,
            set(experiment + REFERENCES),
        ),
        "alice, from the page cache": (users["alice"], cacheable, set(experiment + hers)),
        "dave (owns nothing, as carol), from the page cache": (users["dave"], cacheable, set()),
        "anonymous, from the page cache": (None, cacheable, set()),
    }
    leaks, errors, seen, hits = [], [], {}, {}
    for who, (user, addresses, allowed) in people.items():
        client = Client()
        if user is not None:
            client.force_login(user)
        found, failed, cached = walk(client, addresses, markers)
        hits[who] = cached
        errors += [f"{who}: {e}" for e in failed]
        for marker, where in found.items():
            seen.setdefault(marker, set()).add(who)
            if marker not in allowed:
                leaks += [f"{who} reads {marker!r} at {url}" for url in where[:5]]
    assert leaks == [], "\n".join(leaks)
    assert errors == [], "\n".join(errors)
    # The planting works: each marker was found by someone who may read it.
    unseen = [m for m in markers if not any(m in people[w][2] for w in seen.get(m, ()))]
    assert unseen == []
    # The walks "from the page cache" were answered from it (signed in: its pages, not
    # the API; the private experiment's pages are 404s to most).
    pages = [u for u in cacheable if not page_cache_routes.match(u.split("?")[0]).route.api]
    for who, count in hits.items():
        if who.endswith("from the page cache"):
            wanted = cacheable if people[who][0] is None else pages
            assert count >= len(wanted) // 2, (who, count, len(wanted))


def test_the_checked_runs_owner_reads_what_they_may(planted):
    """bob's own run check: the figures, "a run you cannot see", no reference name."""
    client = Client()
    client.force_login(planted["users"]["bob"])
    bob_run = planted["bob_run"]
    page = client.get(f"/integrity/runs/{bob_run.pk}/").content.decode()
    assert "a run you cannot see" in page and 'id="peer-private"' in page
    assert "similar to the reference code" in page
    reasons = client.get(f"/api/runs/{bob_run.pk}/").json()["integrity"]["reasons"]
    assert any("similar to a run you cannot see, another owner's" in r for r in reasons)
    assert not re.search(rf"\brun {planted['alice_run'].pk}\b", " ".join(reasons))
    reviewer = Client()
    reviewer.force_login(planted["users"]["reviewer"])
    page = reviewer.get(f"/integrity/runs/{bob_run.pk}/").content.decode()
    assert "PRIVMARKEXP" in page and "REFMARKPATH/solution.py" in page
    assert f"run {planted['alice_run'].pk} of PRIVMARKEXP by {OWNER}" in page

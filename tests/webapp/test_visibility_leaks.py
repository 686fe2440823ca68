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
import json
import re
import uuid
import zipfile
from itertools import product

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern
from django.utils import timezone

from benchmark.failures import FAILURE_KEYS
from tests.benchmark import archive_builders as ab
from tests.benchmark.integrity_corpus import REFERENCE, renamed
from tests.webapp import integrity_cases as cases
from tests.webapp.run_page_fixtures import agent_run_with_output
from webapp.competitions.models import Competition, KnownIssue
from webapp.competitions.services import catalogue_sync
from webapp.edge import page_cache
from webapp.edge.page_cache import routes as page_cache_routes
from webapp.integrity import services
from webapp.integrity.models import ReferenceCorpus, ReferenceFile, RunCheck
from webapp.integrity.references import read_references_zip
from webapp.results.models import Experiment, GradeReport, PartialUpload, Run, Upload
from webapp.results.uploads.services import upload_create, upload_process
from webapp.runs.models import AgentRun, Launch

pytestmark = pytest.mark.django_db
COMPETITION = "spaceship-titanic"

# Markers of alice's private experiment (reviewers see every experiment), of her upload
# and her agent run (hers alone among the people walking), and of the reference code
# (reviewers' material).
OWNER = "alice_privmarkuser"  # her user name: whose an experiment is, is private too
EXPERIMENT = [
    "privmarkuser",
    "PRIVMARKEXP",
    "PRIVMARKSCAFFOLD",
    "PRIVMARKMODEL",
    "PRIVMARKGROUP",
    "privmark_solution",
    "PRIVMARKCODE",
    "PRIVMARKLOG",
]
HERS = ["PRIVMARKUPLOAD", "PRIVMARKAGENTLOG"]
REFERENCES = ["REFMARKPATH", "REFMARKSOURCE", "REFMARKCODE", "REFMARKNOTE", "REFMARKARCHIVE"]


def upload_run(owner, archive_name: str, group: str, files: dict[str, str], metadata: dict) -> Run:
    """One uploaded run on COMPETITION with ``files`` (paths inside the run's folder),
    graded by hand with a medal."""
    base = f"{group}/{ab.run_id(COMPETITION, 0, owner.username)}"
    archive = {f"{group}/metadata.json": json.dumps({"run_group": group, "runs": {}}).encode()}
    archive[f"{base}/submission/submission.csv"] = b"PassengerId,Transported\n0001_01,True\n"
    archive.update({f"{base}/{path}": text.encode() for path, text in files.items()})
    created = upload_create(
        owner=owner,
        uploaded_file=SimpleUploadedFile(archive_name, ab.zip_bytes(archive)),
        metadata=metadata,
    )
    upload_process(created.upload.pk)
    experiment = Upload.objects.get(pk=created.upload.pk).experiment
    run = Run.objects.get(experiment=experiment)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.GRADED)
    GradeReport.objects.create(
        run=run,
        experiment=experiment,
        competition=run.competition,
        seed=run.seed,
        score=0.9,
        any_medal=True,
        bronze_medal=True,
        above_median=True,
        submission_exists=True,
        valid_submission=True,
        created_at=timezone.now(),
    )
    return Run.objects.get(pk=run.pk)


@pytest.fixture
def planted(django_user_model, media, settings):
    catalogue_sync()
    users = {
        name: django_user_model.objects.create_user(username, password=f"pw-{name}-123")
        for name, username in (
            ("alice", OWNER),
            ("bob", "bob"),
            ("carol", "carol"),
            ("dave", "dave"),
        )
    }
    users["reviewer"] = django_user_model.objects.create_user(
        "rita", password="pw-rita-123", is_staff=True
    )
    users["reviewer"].groups.add(Group.objects.get(name="reviewers"))
    users["staff"] = django_user_model.objects.create_user(
        "stan", password="pw-stan-123", is_staff=True
    )

    # The competition's reference code, every name and text marked.
    references = io.BytesIO()
    with zipfile.ZipFile(references, "w") as archive:
        archive.writestr("REFMARKPATH/solution.py", REFERENCE + "\n# REFMARKCODE\n")
        archive.writestr(
            "sources.csv",
            "path,source\nREFMARKPATH/solution.py,https://refmark.example/REFMARKSOURCE\n",
        )
    services.corpus_create(
        Competition.objects.get(slug=COMPETITION),
        read_references_zip(io.BytesIO(references.getvalue()), "REFMARKNOTE"),
        source_name="REFMARKARCHIVE.zip",
        note="REFMARKNOTE",
    )

    # alice's unpublished experiment, and an agent run of hers.
    alice_run = upload_run(
        users["alice"],
        "PRIVMARKUPLOAD.zip",
        "2024-10-01_run-group_PRIVMARKGROUP",
        {
            "code/privmark_solution.py": cases.CLEAN + "\n# PRIVMARKCODE\n",
            "logs/run.log": "PRIVMARKLOG: training\n",
        },
        {"scaffold": "PRIVMARKSCAFFOLD", "model": "PRIVMARKMODEL", "name": "PRIVMARKEXP"},
    )
    agent_run = agent_run_with_output(users["alice"])
    ab.write_file(
        __import__("pathlib").Path(agent_run.output_dir) / "logs" / "PRIVMARKAGENT.log",
        b"PRIVMARKAGENTLOG\n",
    )

    # bob's published run copies alice's code and the reference (names changed).
    bob_run = upload_run(
        users["bob"],
        "bob-runs.zip",
        "2024-10-02_run-group_bob",
        {
            "code/copy.py": renamed(cases.CLEAN),
            "code/ref_copy.py": renamed(REFERENCE),
            "logs/run.log": "training\n",
        },
        {"scaffold": "tester", "model": "bob-model", "name": "bob's published experiment"},
    )
    Experiment.objects.filter(pk=bob_run.experiment_id).update(is_published=True)
    services.run_check(alice_run.pk)
    check = services.run_check(bob_run.pk)
    assert {fact["kind"] for fact in check.reasons} == {"reference", "peer"}, check.reasons
    assert check.peer_run_id == alice_run.pk

    # The corrections log names her experiment: a reviewer disqualifies her run, and a
    # known issue on the competition moves both experiments' figures.
    services.run_check_decide(
        services.run_check_of(alice_run).pk,
        decision=RunCheck.Status.DISQUALIFIED,
        reason="the same code as another run",
        user=users["reviewer"],
    )
    KnownIssue.objects.create(
        competition=Competition.objects.get(slug=COMPETITION),
        kind=KnownIssue.Kind.LEAKAGE,
        note="the test labels leak",
    )

    upload = Upload.objects.get(experiment_id=alice_run.experiment_id)
    return {
        "users": users,
        "alice_run": alice_run,
        "bob_run": bob_run,
        "agent_run": agent_run,
        # The addresses of her pages are markers too: a link is a leak.
        "experiment": EXPERIMENT
        + [
            f"/experiments/{alice_run.experiment_id}/",
            f"/runs/result/{alice_run.pk}/",
            f"/integrity/runs/{alice_run.pk}/",
            f"/api/runs/{alice_run.pk}/",
        ],
        "hers": HERS
        + [
            f"/runs/agent/{agent_run.pk}/",
            f"/runs/{agent_run.launch_id}/",
            f"/uploads/{upload.pk}/",
        ],
        "files": [
            "code/privmark_solution.py",
            "logs/run.log",
            "code/copy.py",
            "code/ref_copy.py",
            "submission/submission.csv",
            "run.log",
            "logs/PRIVMARKAGENT.log",
            "logs/events.jsonl",
            "code/train.py",
        ],
    }


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

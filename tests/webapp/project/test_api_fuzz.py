"""The whole API held to its own OpenAPI schema (``/api/schema/``, drf-spectacular's):
schemathesis builds requests valid and invalid for every operation and sends them to the
WSGI application in-process, on the test database, as an anonymous visitor, as a user
whose token may launch runs (so the write endpoints are exercised too) and as an
administrator. Every schemathesis check runs: no 5xx; status codes, content types,
headers and bodies as documented; invalid data refused and valid data accepted; plus
``no_server_path``. The tus endpoints are left out of the schema (the tus protocol
describes them, README *Uploading results*; ``test_resumable_uploads.py`` tests them).

Bounded and reproducible: hypothesis is derandomized and each operation gets at most
``MAX_EXAMPLES`` generated cases (plus schemathesis' explicit coverage cases). Ids from 1
name real objects (sequences are reset), so the fuzzer's small ids reach real rows.

One test per viewer, not per operation, so the site is built 3 times rather than 75: each
viewer's test runs every operation as its own subtest (reported and failing on its own,
labelled by method and path), built and run by the helpers of schemathesis' lazy schemas
(``from_fixture`` itself renames pytest nodes through an attribute pytest 9.2 no longer
has; both are pinned). A viewer's operations share its site in schema order: what one
writes (a cancel, a re-grade, a launch, an upload) the next may read; nothing deletes, so
ids 1-3 name real rows throughout."""

import json
import random
from pathlib import Path

import pytest
import schemathesis
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis.config import SchemathesisConfig
from schemathesis.pytest.lazy import get_all_tests, run_subtest

from benchmark.catalogue import competitions_in_split
from tests.support import archive_builders as ab
from tests.support.factories import synthetic_report
from webapp.competitions.services import catalogue_sync
from webapp.project.wsgi import application
from webapp.results.services import (
    ReportedRunGroup,
    agent_get_or_create,
    experiment_create_from_reports,
)
from webapp.runs.models import HostClaim, RunHost

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, reset_sequences=True)]

MAX_EXAMPLES = 5
ROOT = Path(__file__).resolve().parents[3]
ARCHIVE = ab.zip_bytes(ab.run_group_files("rg", ["spaceship-titanic"]))
COMPETITIONS = [c.id for c in competitions_in_split("low")][:2]

# Every check runs on every operation. A launch and an upload are valid or not by the
# site's state and by JSON inside a form field (the agents installed, the competitions'
# data prepared, the metadata's keys), which OpenAPI cannot say; publishing by the
# experiment's stated conditions; a disclosure by rules of text OpenAPI does not carry
# (no NUL, a URL's scheme, best-of-K); a submitted agent by its archive's files: for those
# operations only, a 400 to data the schema allows is accepted as a refusal with a reason.
CONFIG = SchemathesisConfig.from_str(
    """
[[operations]]
include-path-regex = "^/api/(launches/|uploads/|agents/|experiments/[^/]+/(disclosure|publish)/)$"
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "429"]
"""
)
# Loaded at collection: serving the schema reads no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)


@pytest.fixture
def site(tmp_path, settings, django_user_model, monkeypatch):
    """A user who may launch runs, with a token; a published reported experiment with
    reports; an upload; a launch with agent runs, one held by a run host. Nothing is sent to
    Celery."""
    from webapp.project.celery import app
    from webapp.results.uploads.services import upload_create
    from webapp.runs.services.launch import launch_create

    monkeypatch.setattr(app.Task, "apply_async", lambda *args, **kwargs: None)
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.MLEBOARD_DATA_DIR = tmp_path / "data"
    catalogue_sync()
    user = django_user_model.objects.create_user("fuzz", password="pw-fuzz-12345")
    user.user_permissions.add(Permission.objects.get(codename="launch_agent_runs"))
    rng = random.Random(0)
    experiment_create_from_reports(
        name="reported",
        agent=agent_get_or_create("aide", "gpt-4o"),
        run_groups=[
            ReportedRunGroup(f"rg{s}", s, [synthetic_report(c, rng, s) for c in COMPETITIONS])
            for s in range(2)
        ],
        owner=user,
        is_published=True,
    )
    upload_create(
        owner=user,
        uploaded_file=SimpleUploadedFile("runs.zip", ARCHIVE),
        metadata={"scaffold": "aide", "model": "gpt-4o"},
    )
    for cid in COMPETITIONS:
        (settings.MLEBOARD_DATA_DIR / cid / "prepared" / "public").mkdir(parents=True)
    launch = launch_create(owner=user, agent_name="baseline", competitions=COMPETITIONS, seeds=2)
    # A run host holding one of its runs (the hosts' answer, staff only).
    host = RunHost.objects.create(
        name="fuzz-host",
        cpus=4,
        memory_bytes=8 * 1024**3,
        gpu_ids=["0"],
        engine="local",
        queues=["runs.cpu"],
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    HostClaim.objects.create(
        host=host, agent_run=launch.runs.first(), token="fuzz", cpus=1, memory_bytes=1024**3
    )
    return Token.objects.create(user=user).key


# The hooks below mix real values into what the schema alone would give (which almost
# never names a row or an agent), so that the fuzzed fields reach the code past the
# lookups: ids 1-3 name the site's rows; a launch names a real agent and competitions; an
# upload carries a real archive and metadata holding the fuzzed text.


@schema.hook
def flatmap_path_parameters(context, parameters):
    real = {"id": st.integers(1, 3), "slug": st.sampled_from(COMPETITIONS)}
    named = {k: v for k, v in real.items() if k in (parameters or {})}
    if not named:
        return st.just(parameters)
    mixed = st.fixed_dictionaries(named).map(lambda values: {**parameters, **values})
    return st.one_of(st.just(parameters), mixed)


@schema.hook
def flatmap_body(context, body):
    if not isinstance(body, dict):
        return st.just(body)
    if context.operation.path == "/api/launches/":
        real = {"agent": "baseline", "competitions": COMPETITIONS, "backend": "local"}
    elif context.operation.path == "/api/uploads/":
        if not isinstance(body.get("metadata", ""), str) or not isinstance(
            body.get("archive", b""), bytes
        ):
            # A body the schema refuses stays refused: made real, it would be accepted.
            return st.just(body)
        text = body.get("metadata", "")
        metadata = {"scaffold": text[:100] or "aide", "model": "gpt-4o", "name": text[:200]}
        real = {"archive": ARCHIVE, "metadata": json.dumps(metadata)}
    else:
        return st.just(body)
    return st.one_of(st.just(body), st.just({**body, **real}))


@pytest.fixture(params=["anonymous", "user", "staff"])
def signed_in(request, site, django_user_model) -> dict:
    """The headers of one viewer: nobody, the site's user, or an administrator."""
    if request.param == "anonymous":
        return {}
    if request.param == "user":
        return {"Authorization": f"Token {site}"}
    admin = django_user_model.objects.create_superuser("root", password="pw-root-12345")
    return {"Authorization": f"Token {Token.objects.create(user=admin).key}"}


@schemathesis.check
def no_server_path(ctx, response, case):
    """No answer names a place on the server's disk (an absolute path under the media, data
    or project folders)."""
    from django.conf import settings as django_settings

    text = response.text or ""
    for root in (django_settings.MEDIA_ROOT, django_settings.MLEBOARD_DATA_DIR, ROOT):
        if str(root) in text:
            raise AssertionError(f"the answer names a server path under {root}")


def check_case(case, headers):
    """Every schemathesis check (responses conform to the schema: status codes, content
    types, headers and bodies; invalid data refused, valid data accepted; no 5xx) and no
    server path."""
    case.call_and_validate(headers=headers, additional_checks=[no_server_path])


SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def test_the_api_answers_as_its_schema_says(signed_in, subtests):
    """``check_case`` on every operation, for anonymous visitors, a user and an
    administrator: each operation a subtest, built (generation and coverage phases, the
    hooks above) and run by schemathesis' own pytest plugin code."""
    operations = list(
        get_all_tests(schema=schema, test_func=check_case, settings=SETTINGS, given_kwargs={})
    )
    assert operations, "the schema lists no operation"
    for result in operations:
        operation, test = result.ok()  # raises on an invalid operation in the schema
        run_subtest(operation, {"headers": signed_in}, test, subtests)

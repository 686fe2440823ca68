"""Peer comparisons on the site: runs compared with other owners' runs on the same
competition, with code most owners share (a scaffold's boilerplate) and each scaffold's
template code set aside, so that honest runs of one scaffold are not flagged while a copy
still is."""

from __future__ import annotations

import pytest
from django.test import Client

from benchmark.integrity.common_code import template_fingerprints
from benchmark.integrity.winnowing import best_match
from tests.support.integrity_cases import COMPETITION, graded_upload
from tests.support.integrity_corpus import renamed
from tests.support.scaffold_corpus import SOLUTIONS, TEMPLATE
from webapp.competitions.services import catalogue_sync
from webapp.integrity import services
from webapp.integrity.models import RunCheck, ScaffoldTemplate
from webapp.results.models import Scaffold

pytestmark = pytest.mark.django_db

# Honest solutions in one scaffold's style, one per owner (each written for its own
# competition, uploaded here on one: the grader is not what is tested).
HONEST = [
    "playground-s3e9.py",
    "tabular-jan-2021.py",
    "playground-s3e11.py",
    "abalone-age.py",
    "mobile-price.py",
    "cat-in-the-dat.py",
]


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


def owners(django_user_model, count: int) -> list:
    return [
        django_user_model.objects.create_user(f"owner{i}", password=f"pw-owner{i}-123")
        for i in range(count)
    ]


def flagged_by_peers(runs) -> list[int]:
    flagged = []
    for run in runs:
        check = services.run_check(run.pk)
        if any(fact["kind"] == "peer" for fact in check.reasons):
            flagged.append(run.pk)
    return flagged


def honest_runs(django_user_model) -> list:
    return [
        graded_upload(owner, {COMPETITION: SOLUTIONS[name]})[0]
        for owner, name in zip(owners(django_user_model, len(HONEST)), HONEST, strict=True)
    ]


def test_honest_runs_of_one_scaffold_are_flagged_only_without_the_share(
    django_user_model, settings
):
    runs = honest_runs(django_user_model)
    settings.MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE = 1.0  # nothing set aside
    assert flagged_by_peers(runs)
    settings.MLEBOARD_PEER_MAX_FINGERPRINT_PERCENTAGE = 0.5
    assert flagged_by_peers(runs) == []
    check = RunCheck.objects.get(run=runs[0])
    assert check.status == RunCheck.Status.CLEAN
    assert check.peer_filter["applied"] is True and check.peer_filter["documents"] == 6
    assert check.peer_filter["ignored_fingerprints"] > 0


def test_a_copy_is_flagged_even_repeated_over_many_experiments(django_user_model, alice, bob):
    """One document per owner: bob's copy of alice's run in five experiments counts once,
    so the copied code is not taken for code most owners share."""
    runs = honest_runs(django_user_model)
    (original,) = graded_upload(alice, {COMPETITION: SOLUTIONS["house-prices.py"]})
    copies = [
        graded_upload(bob, {COMPETITION: renamed(SOLUTIONS["house-prices.py"]) + f"\n# {i}\n"})[0]
        for i in range(5)
    ]
    check = services.run_check(copies[0].pk)
    assert check.status == RunCheck.Status.FLAGGED
    assert check.peer_run_id == original.pk and check.peer_similarity >= 0.6
    assert check.peer_filter["applied"] and check.peer_filter["documents"] == 8
    assert check.peer_filter["runs"] == len(runs) + 1 + 5
    # The original is flagged too (its closest other owner's run is a copy of it).
    assert services.run_check(original.pk).peer_run_id in {c.pk for c in copies}


def test_a_scaffolds_template_is_set_aside_even_between_two_owners(
    django_user_model, settings, reviewer
):
    """Two owners only: the share cannot apply (it would set aside everything they share),
    but the scaffold's template code is set aside: an operator adds it in the admin and
    the scaffold's runs are checked again."""
    first, second = owners(django_user_model, 2)
    # Each fills the template's gap its own way (different models, different statements).
    ridge = (
        "model = Ridge(alpha=2.0)\nmodel.fit(X_train, y_train)\nprint(model.score(X_val, y_val))\n"
    )
    boosted = (
        "for depth in (2, 4, 8):\n"
        "    booster = GradientBoostingRegressor(max_depth=depth).fit(X_train, y_train)\n"
        "    scores[depth] = mean_absolute_error(y_val, booster.predict(X_val))\n"
        "best = min(scores, key=scores.get)\n"
    )
    runs = [
        graded_upload(first, {COMPETITION: TEMPLATE + ridge})[0],
        graded_upload(second, {COMPETITION: TEMPLATE + boosted})[0],
    ]
    assert flagged_by_peers(runs)
    check = RunCheck.objects.get(run=runs[0])
    assert check.peer_filter["applied"] is False and check.peer_filter["template_fingerprints"] == 0

    from tests.support.users import member_of

    operator = member_of(django_user_model, "operators", "opal", is_staff=True)
    admin = Client()
    admin.force_login(operator)
    scaffold = Scaffold.objects.get(name="tester")
    response = admin.post(
        "/admin/integrity/scaffoldtemplate/add/",
        {"scaffold": scaffold.pk, "path": "skeleton.py", "text": TEMPLATE, "note": "its prompt"},
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert ScaffoldTemplate.objects.get(scaffold=scaffold).path == "skeleton.py"
    # The scaffold's runs were asked to be checked again.
    assert all(RunCheck.objects.get(run=r).due_since is not None for r in runs)
    assert flagged_by_peers(runs) == []
    check = RunCheck.objects.get(run=runs[0])
    assert check.peer_filter["template_fingerprints"] > 0

    # What the page says of it, to a reviewer and to the run's owner.
    page = Client()
    page.force_login(reviewer)
    text = page.get(f"/integrity/runs/{runs[0].pk}/").content.decode()
    assert "Shared code was not set aside: 2 owners" in text and "template code was" in text
    page.force_login(first)
    text = page.get(f"/integrity/runs/{runs[0].pk}/").content.decode()
    assert "2 owners" not in text and "set aside: boilerplate says nothing" in text


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"path": "skeleton.txt", "text": "x = 1"}, "name the template with its extension"),
        ({"path": "../up.py", "text": "x = 1"}, "points outside"),
        ({"path": "a.py", "text": "   "}, "Give the template"),
        ({"path": "a.ipynb", "text": "not json"}, "not a notebook"),
        ({"path": "a" * 400 + ".py", "text": "x = 1"}, "at most 300 characters"),
    ],
)
def test_a_bad_template_is_refused_with_why(django_user_model, fields, message):
    from tests.support.users import member_of

    operator = member_of(django_user_model, "operators", "opal", is_staff=True)
    admin = Client()
    admin.force_login(operator)
    scaffold = Scaffold.objects.create(name="aide")
    response = admin.post(
        "/admin/integrity/scaffoldtemplate/add/", {"scaffold": scaffold.pk, **fields}
    )
    assert response.status_code == 200 and message in response.content.decode()
    assert not ScaffoldTemplate.objects.exists()


def test_both_runs_of_a_pair_get_one_peer_figure(django_user_model):
    """With fingerprints set aside (here the scaffold's template), Dolos' figure for a
    pair depends on which file it was given first. Each run's check compared its own
    file as the first one, so the two runs of a pair got different figures (0.270 and
    0.353 for these two); both now take the older run's file first."""
    first, second = owners(django_user_model, 2)
    older = graded_upload(first, {COMPETITION: SOLUTIONS["leaf-classification.py"]})[0]
    newer = graded_upload(second, {COMPETITION: SOLUTIONS["playground-s3e11.py"]})[0]
    ScaffoldTemplate.objects.create(
        scaffold=Scaffold.objects.get(name="tester"), path="skeleton.py", text=TEMPLATE
    )
    ignored = template_fingerprints({"skeleton.py": TEMPLATE})
    files = (
        {"a.py": SOLUTIONS["leaf-classification.py"]},
        {"b.py": SOLUTIONS["playground-s3e11.py"]},
    )
    expected = best_match(*files, ignored=ignored, left=lambda sub, ref: True).similarity
    assert expected != best_match(*files, ignored=ignored, left=lambda sub, ref: False).similarity
    for run, peer in ((older, newer), (newer, older)):
        check = services.run_check(run.pk)
        assert check.peer_run_id == peer.pk and check.peer_filter["template_fingerprints"] > 0
        assert check.peer_similarity == pytest.approx(expected)

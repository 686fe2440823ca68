import dataclasses
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from webapp.competitions.models import Competition, KnownIssue, PrivateLeaderboard
from webapp.competitions.services import catalogue_sync, leaderboard_import_file

pytestmark = pytest.mark.django_db


def write_mlebench_leaderboard(path: Path, scores: list[float]) -> Path:
    lines = ["scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore"]
    lines += [f"{s},{1000 + i},True,2020-01-01,{s},True" for i, s in enumerate(scores)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_catalogue_sync_creates_every_competition_with_its_splits():
    result = catalogue_sync(include_demo=True)
    assert len(result.created) == 86
    assert Competition.objects.filter(splits__slug="all").count() == 75
    assert Competition.objects.filter(splits__slug="low").count() == 22
    assert Competition.objects.filter(splits__slug="medium").count() == 38
    assert Competition.objects.filter(splits__slug="high").count() == 15
    assert Competition.objects.filter(splits__slug="dev").count() == 7
    assert Competition.objects.filter(is_demo=True).count() == 4
    # Known issues of the catalogue arrive as such, and a second sync adds nothing.
    n_issues = KnownIssue.objects.count()
    assert n_issues >= 5
    again = catalogue_sync(include_demo=True)
    assert len(again.created) == 0 and KnownIssue.objects.count() == n_issues


def test_leaderboard_import_versions_and_thresholds(tmp_path):
    catalogue_sync()
    comp = Competition.objects.get(slug="spaceship-titanic")  # accuracy: higher is better
    scores = [round(1 - i / 500, 5) for i in range(120)]
    first = leaderboard_import_file(comp, write_mlebench_leaderboard(tmp_path / "a.csv", scores))
    assert (first.n_teams, first.version, first.is_current) == (120, 1, True)
    # 100-249 teams: gold at rank 10, silver int(0.2N)=24, bronze int(0.4N)=48 (1-based).
    assert first.gold_threshold == scores[9]
    assert first.silver_threshold == scores[23]
    assert first.bronze_threshold == scores[47]
    assert first.entries.count() == 120
    # A new import adds a version; the old one stays, no longer current.
    second = leaderboard_import_file(
        comp, write_mlebench_leaderboard(tmp_path / "b.csv", scores[:50])
    )
    first.refresh_from_db()
    assert second.version == 2 and second.is_current and not first.is_current
    assert PrivateLeaderboard.objects.filter(competition=comp).count() == 2
    # The same file again is recognised, not stored twice.
    again = leaderboard_import_file(comp, tmp_path / "b.csv")
    assert again.pk == second.pk


def test_lfs_pointer_is_refused_with_git_lfs_advice_and_nothing_changes(tmp_path):
    catalogue_sync()
    pointer = tmp_path / "leaderboard.csv"
    pointer.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 12\n")
    with pytest.raises(CommandError, match="git lfs pull"):
        call_command("import_leaderboard", "spaceship-titanic", str(pointer))
    assert PrivateLeaderboard.objects.count() == 0


def test_import_mlebench_checkout_of_lfs_pointers(mlebench_checkout, capsys):
    catalogue_sync()
    call_command("import_mlebench", str(mlebench_checkout))
    out, err = capsys.readouterr()
    # One clear message per competition whose leaderboard is a pointer...
    assert err.count("git lfs pull") >= 75
    # ...and everything else imported: descriptions are there, no leaderboard is.
    described = Competition.objects.exclude(description="").count()
    assert described >= 75
    assert PrivateLeaderboard.objects.count() == 0
    assert "summary:" in out


def test_import_mlebench_tree_with_real_leaderboards(tmp_path, capsys):
    catalogue_sync()
    root = tmp_path / "mle-bench"
    folder = root / "mlebench" / "competitions" / "spaceship-titanic"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("id: spaceship-titanic\nname: Spaceship Titanic\n")
    (folder / "description.md").write_text("# Spaceship Titanic\nPredict who was transported.\n")
    (folder / "description_obfuscated.md").write_text("Predict a binary label.\n")
    write_mlebench_leaderboard(folder / "leaderboard.csv", [0.82, 0.81, 0.80, 0.79, 0.70])
    broken = root / "mlebench" / "competitions" / "aerial-cactus-identification"
    broken.mkdir(parents=True)
    (broken / "config.yaml").write_text("id: aerial-cactus-identification\n")
    (broken / "leaderboard.csv").write_text("scoreNullable,teamId\n")  # no score column
    (root / "experiments" / "splits").mkdir(parents=True)
    call_command("import_mlebench", str(root))
    comp = Competition.objects.get(slug="spaceship-titanic")
    assert "transported" in comp.description
    board = comp.current_leaderboard
    assert board is not None and board.n_teams == 5 and board.gold_threshold == 0.82
    cactus = Competition.objects.get(slug="aerial-cactus-identification")
    assert cactus.current_leaderboard is None


def test_grader_quirks_are_shown_as_known_issues_without_leaving_the_clean_subset(client):
    catalogue_sync()
    quirks = KnownIssue.objects.filter(
        competition__slug="nomad2018-predict-transparent-conductors", source="grader"
    )
    assert quirks.exists() and not quirks.filter(excludes_from_clean_subset=True).exists()
    assert any("position" in q.note for q in quirks)
    page = client.get("/competitions/nomad2018-predict-transparent-conductors/").content.decode()
    assert "Grader quirk" in page
    catalogue_sync()  # idempotent
    assert (
        KnownIssue.objects.filter(
            competition__slug="nomad2018-predict-transparent-conductors", source="grader"
        ).count()
        == quirks.count()
    )


def test_import_mlebench_refreshes_the_published_leaderboard_from_its_readme(
    mlebench_checkout, tmp_path, capsys
):
    from benchmark.published import PublishedFigure, read_readme_leaderboard
    from tests.support.mlebench_material import build_checkout
    from webapp.results.models import Experiment

    catalogue_sync()
    call_command("import_mlebench", str(mlebench_checkout))
    entries = read_readme_leaderboard((mlebench_checkout / "README.md").read_text())
    published = Experiment.objects.filter(source="reported").exclude(published_figures={})
    assert published.count() == len(entries) == 26
    disarray = published.get(name__startswith="Disarray")
    assert disarray.published_figures["low"] == {"mean": 90.91, "standard_error": 0.0}
    assert disarray.known_leakage and disarray.known_leakage_url.endswith("/pull/118")
    assert disarray.known_leakage_note and disarray.grading_reports_available
    assert "published leaderboard: 26 entries" in capsys.readouterr().out

    # The README drops a row and changes a figure: one command brings the site in line.
    changed = entries[1:]
    figures = {**changed[0].figures, "low": PublishedFigure(mean=50.5, standard_error=1.25)}
    changed[0] = dataclasses.replace(changed[0], figures=figures)
    newer = build_checkout(tmp_path / "newer", changed)
    call_command("import_mlebench", str(newer))
    names = set(published.values_list("name", flat=True))
    assert names == {e.name for e in changed}
    low = published.get(name=changed[0].name).published_figures["low"]
    assert low == {"mean": 50.5, "standard_error": 1.25}
    assert "(0 created, 25 updated, 1 no longer published removed)" in capsys.readouterr().out


def test_every_competition_gives_its_deadline_in_the_api(client):
    """``deadline`` (ISO date) in the list and the detail, with its source where it is not
    the competition's description; the demos have none."""
    catalogue_sync(include_demo=True)
    listed = client.get("/api/competitions/").json()
    assert len(listed) == 86
    by_id = {c["id"]: c for c in listed}
    mlebench = [c for c in listed if not c["is_demo"]]
    assert len(mlebench) == 82
    assert all(c["deadline"] for c in mlebench), [c["id"] for c in mlebench if not c["deadline"]]
    assert by_id["3d-object-detection-for-autonomous-vehicles"]["deadline"] == "2019-11-12"
    assert by_id["3d-object-detection-for-autonomous-vehicles"]["deadline_source"] == "description"
    assert all(c["deadline"] is None for c in listed if c["is_demo"])
    detail = client.get("/api/competitions/leaf-classification/").json()
    assert detail["deadline"] == "2017-02-28"
    assert "leaderboard" in detail["deadline_source"] and "http" in detail["deadline_source"]
    page = client.get("/competitions/leaf-classification/").content.decode()
    assert "2017-02-28" in page and 'id="deadline-source"' in page
    demo = client.get("/competitions/demo-wine/").content.decode()
    assert "never held on Kaggle" in demo

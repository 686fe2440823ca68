from __future__ import annotations

import dataclasses

import pytest

from benchmark.catalogue import (
    CompetitionFacts,
    UnknownCompetition,
    competitions_in_split,
    get_competition,
    load_catalogue,
)
from benchmark.splits import VALID_SPLIT_NAMES, UnknownSplit, resolve_split
from tests.support.mlebench_material import SYSTEM_CARD, split_lists


def test_split_sizes_match_mlebench():
    names = ("low", "medium", "high", "all", "systemcard", "dev")
    sizes = {s: len(competitions_in_split(s)) for s in names}
    assert sizes == {"low": 22, "medium": 38, "high": 15, "all": 75, "systemcard": 30, "dev": 7}
    assert [f.id for f in competitions_in_split("lite")] == [
        f.id for f in competitions_in_split("low")
    ]
    assert len(competitions_in_split("split75")) == 75


def test_complexity_splits_partition_all():
    low, medium, high = (
        {f.id for f in competitions_in_split(s)} for s in ("low", "medium", "high")
    )
    assert not (low & medium or low & high or medium & high)
    assert low | medium | high == {f.id for f in competitions_in_split("all")}
    for split in ("low", "medium", "high"):
        assert {f.complexity for f in competitions_in_split(split)} == {split}


@pytest.mark.parametrize("split", ["low", "medium", "high", "split75", "systemcard", "dev"])
def test_splits_equal_mlebench_split_files(split):
    listed = split_lists()[split]
    assert sorted(listed) == sorted(f.id for f in competitions_in_split(split))


def test_systemcard_is_the_system_cards_30_competitions_of_all():
    listed = [f.id for f in competitions_in_split("systemcard")]
    assert sorted(listed) == sorted(SYSTEM_CARD) and len(set(SYSTEM_CARD)) == 30
    assert set(listed) <= {f.id for f in competitions_in_split("all")}
    # Of every complexity: 5 low, 20 medium, 5 high.
    complexities = [f.complexity for f in competitions_in_split("systemcard")]
    assert {c: complexities.count(c) for c in set(complexities)} == {
        "low": 5,
        "medium": 20,
        "high": 5,
    }


@pytest.mark.parametrize(
    "name, slug",
    [
        ("lite", "low"),
        ("split75", "all"),
        ("systemcard", "systemcard"),
        ("systemcard.txt", "systemcard"),
        ("split75.txt", "all"),
        (" Lite ", "low"),
        ("dev", "dev"),
        ("demo", "demo"),
    ],
)
def test_aliases_and_mlebench_file_names_resolve(name, slug):
    assert resolve_split(name) == slug
    assert competitions_in_split(name) == competitions_in_split(slug)


def test_ran_is_a_split_of_figures_only():
    assert resolve_split("ran", figures=True) == "ran"
    with pytest.raises(UnknownSplit):
        resolve_split("ran")


def test_demo_competitions_only_with_include_demo():
    assert not any(f.is_demo for f in load_catalogue().values())
    demos = {f.id: f for f in competitions_in_split("demo")}
    assert set(demos) == {"demo-digits", "demo-breast-cancer", "demo-diabetes", "demo-wine"}
    assert set(demos) <= set(load_catalogue(include_demo=True))
    assert demos["demo-digits"].category == "Image Classification"
    assert demos["demo-digits"].metric == "accuracy"
    assert demos["demo-breast-cancer"].metric == "roc_auc"
    assert demos["demo-diabetes"].lower_is_better is True
    assert demos["demo-wine"].target_columns == ("class_0", "class_1", "class_2")
    assert demos["demo-wine"].metric == "multiclass_log_loss"
    for facts in demos.values():
        assert facts.splits == ("demo",)
        assert facts.complexity == "low" and facts.awards_medals
        assert facts.id_column == "id"
        assert facts.answers == f"{facts.id}/prepared/private/test.csv"
        assert facts.sample_submission == f"{facts.id}/prepared/public/sample_submission.csv"


def test_facts_are_immutable_and_catalogue_copies_are_independent():
    catalogue = load_catalogue()
    facts = catalogue["spaceship-titanic"]
    assert isinstance(facts, CompetitionFacts)
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.metric = "x"  # type: ignore[misc]
    catalogue.clear()
    assert "spaceship-titanic" in load_catalogue()


def test_unknown_split_and_competition():
    with pytest.raises(UnknownSplit, match="unknown split 'huge'") as refused:
        competitions_in_split("huge")
    assert refused.value.valid == VALID_SPLIT_NAMES
    for name in ("low", "systemcard", "demo", "lite = low", "split75 = all"):
        assert name in str(refused.value)
    # MLE-bench's one-competition file is refused with the reason.
    with pytest.raises(UnknownSplit, match="one competition spaceship-titanic"):
        resolve_split("spaceship-titanic.txt")
    with pytest.raises(UnknownCompetition):
        get_competition("no-such-competition")
    assert get_competition("demo-wine").lower_is_better is True


def test_known_issues_and_metric_k_are_loaded():
    catalogue = load_catalogue()
    assert catalogue["champs-scalar-coupling"].known_issues
    assert catalogue["h-and-m-personalized-fashion-recommendations"].metric_k == 12


def test_every_mlebench_competition_has_its_kaggle_deadline():
    """The 75 + 7 dev competitions each carry Kaggle's final submission deadline; where
    their description does not state it, the catalogue says where the date comes from."""
    import datetime as dt

    from benchmark.catalogue import FROM_DESCRIPTION

    catalogue = load_catalogue(include_demo=True)
    mlebench = [f for f in catalogue.values() if not f.is_demo]
    assert len(mlebench) == 82
    missing = [f.id for f in mlebench if f.deadline is None]
    assert missing == []
    for facts in mlebench:
        assert isinstance(facts.deadline, dt.date), facts.id
        # Kaggle's first competitions were in 2010; MLE-bench's newest ended in 2024.
        assert dt.date(2010, 1, 1) <= facts.deadline <= dt.date(2024, 12, 31), facts.id
        assert facts.deadline_source, facts.id
    sourced = {f.id: f.deadline_source for f in mlebench if f.deadline_source != FROM_DESCRIPTION}
    # Those not from a description say where the date comes from, with an address.
    assert 5 <= len(sourced) <= 20
    for cid, source in sourced.items():
        assert "http" in source, (cid, source)
        # The page links the addresses with Django's urlize, which drops a ";" after ")".
        assert ");" not in source, (cid, "write '). ' instead of '); '")
    # Spot checks against the descriptions' Timelines and Kaggle's pages.
    assert catalogue["3d-object-detection-for-autonomous-vehicles"].deadline == dt.date(
        2019, 11, 12
    )
    assert catalogue["lmsys-chatbot-arena"].deadline == dt.date(2024, 8, 5)
    assert catalogue["billion-word-imputation"].deadline == dt.date(2015, 5, 1)
    assert "rolling" in catalogue["spaceship-titanic"].deadline_source
    # The demos never ran on Kaggle.
    assert all(f.deadline is None for f in catalogue.values() if f.is_demo)


@pytest.mark.parametrize(
    "deadline, message",
    [("2019-13-01", "is not a date"), ("soon", "is not a date"), ("2019-11-12T10:00:00", "")],
)
def test_a_malformed_deadline_in_the_catalogue_is_refused(deadline, message):
    from pathlib import Path

    from benchmark.catalogue import CatalogueError, _facts_from_entry

    entry = dataclasses.asdict(load_catalogue()["spaceship-titanic"])
    entry.update(splits=list(entry["splits"]), deadline=deadline, deadline_source=None)
    if message:
        with pytest.raises(CatalogueError, match=message):
            _facts_from_entry(entry, Path("competitions.yaml"))
    else:  # a time of day is not a deadline day either (YAML would read it as a datetime)
        import datetime as dt

        entry["deadline"] = dt.datetime.fromisoformat(deadline)
        with pytest.raises(CatalogueError, match="must be a date"):
            _facts_from_entry(entry, Path("competitions.yaml"))

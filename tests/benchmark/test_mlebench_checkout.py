from __future__ import annotations

from pathlib import Path

import pytest

from benchmark.catalogue import load_catalogue
from benchmark.mlebench_checkout import (
    IMPORTED,
    MISSING,
    PARTIAL,
    READ,
    REFUSED,
    SKIPPED,
    CheckoutError,
    read_mlebench_checkout,
)

POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 1234\n"


def test_shared_checkout_one_lfs_message_per_competition(mlebench_checkout):
    result = read_mlebench_checkout(mlebench_checkout)
    assert len(result.competitions) == 82
    assert result.missing_competitions == ()
    assert result.messages == ()  # its split lists agree with our catalogue
    for outcome in result.competitions:
        assert outcome.status == PARTIAL, outcome.summary()
        assert len(outcome.messages) == 1
        assert "Git LFS pointer" in outcome.messages[0]
        assert "git lfs pull" in outcome.messages[0]
        assert outcome.leaderboard is None and outcome.thresholds is None
        assert outcome.part("leaderboard.csv").status == REFUSED
        folder = mlebench_checkout / "mlebench" / "competitions" / outcome.competition_id
        # Everything else is read, as it is on disk.
        assert outcome.description == (folder / "description.md").read_text()
        assert outcome.description_obfuscated == (folder / "description_obfuscated.md").read_text()
        assert outcome.config["id"] == outcome.competition_id
        assert outcome.facts is not None and outcome.facts.id == outcome.competition_id
    assert set(result.by_status()[PARTIAL]) == set(load_catalogue())
    assert result.get("spaceship-titanic").splits == ("dev", "spaceship-titanic")
    assert "split75" in result.get("aerial-cactus-identification").splits
    assert len(result.split_lists["split75"]) == 75


def test_not_a_checkout(tmp_path):
    with pytest.raises(CheckoutError, match="not an MLE-bench checkout"):
        read_mlebench_checkout(tmp_path)


def leaderboard_csv(scores) -> str:
    rows = ["scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore"]
    rows += [f"{s},{i},True,2022-05-01 00:00:00,{s},True" for i, s in enumerate(scores)]
    return "\n".join(rows) + "\n"


def competition(root: Path, cid: str, files: dict[str, str]) -> Path:
    folder = root / "mlebench" / "competitions" / cid
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def config(cid: str, name: str = "Some name") -> str:
    return (
        f"id: {cid}\nname: {name}\ncompetition_type: simple\nawards_medals: true\n"
        f"description: mlebench/competitions/{cid}/description.md\n"
    )


@pytest.fixture
def small_checkout(tmp_path) -> Path:
    catalogue = load_catalogue()
    root = tmp_path / "mle-bench"
    cactus = catalogue["aerial-cactus-identification"]  # higher is better
    competition(
        root,
        cactus.id,
        {
            # awards_medals: true here, false in the catalogue
            "config.yaml": config(cactus.id, cactus.name).replace("simple", "code")
            + f"dataset:\n  answers: {cactus.answers}\n"
            f"  sample_submission: {cactus.sample_submission}\n",
            "description.md": "# Task\nFind cacti.\n",
            "description_obfuscated.md": "# Task\nFind plants.\n",
            "leaderboard.csv": leaderboard_csv([1.0, 0.9999, 0.999, 0.99, 0.98]),
        },
    )
    # lower is better, file written worst first, no obfuscated description
    nyc = catalogue["new-york-city-taxi-fare-prediction"]
    competition(
        root,
        nyc.id,
        {
            "config.yaml": config(nyc.id, nyc.name) + f"dataset:\n  answers: {nyc.answers}\n"
            f"  sample_submission: {nyc.sample_submission}\n",
            "description.md": "Predict fares.\n",
            "leaderboard.csv": leaderboard_csv([5.0, 4.0, 3.0, 2.5]),
        },
    )
    competition(
        root,
        "spaceship-titanic",
        {
            "config.yaml": "id: [unclosed\n",
            "description.md": "Rescue passengers.\n",
            "description_obfuscated.md": POINTER.format("1" * 64),
            "leaderboard.csv": POINTER.format("2" * 64),
        },
    )
    competition(root, "not-a-kaggle-competition", {"config.yaml": config("x")})
    competition(root, "leaf-classification", {"config.yaml": config("denoising-dirty-documents")})
    (root / "mlebench" / "competitions" / "__pycache__").mkdir()
    splits = root / "experiments" / "splits"
    splits.mkdir(parents=True)
    low = [f.id for f in catalogue.values() if "low" in f.splits]
    (splits / "low.txt").write_text("\n".join(low[1:] + ["mystery-competition"]) + "\n")
    return root


def test_small_checkout_statuses(small_checkout):
    result = read_mlebench_checkout(small_checkout)
    statuses = {o.competition_id: o.status for o in result.competitions}
    assert statuses == {
        "__pycache__": SKIPPED,
        "aerial-cactus-identification": IMPORTED,
        "leaf-classification": REFUSED,
        "new-york-city-taxi-fare-prediction": PARTIAL,
        "not-a-kaggle-competition": REFUSED,
        "spaceship-titanic": PARTIAL,
    }
    assert len(result.missing_competitions) == 82 - 4


def test_fully_imported_competition_has_leaderboard_and_thresholds(small_checkout):
    cactus = read_mlebench_checkout(small_checkout).get("aerial-cactus-identification")
    assert cactus.description == "# Task\nFind cacti.\n"
    assert cactus.description_obfuscated == "# Task\nFind plants.\n"
    assert cactus.leaderboard.scores == (1.0, 0.9999, 0.999, 0.99, 0.98)
    assert cactus.thresholds.gold == 1.0 and cactus.thresholds.n_teams == 5
    assert cactus.thresholds.median == 0.999
    assert cactus.splits == ()  # the small low.txt leaves it out
    # config.yaml disagreeing with the catalogue is reported, the catalogue kept.
    assert cactus.facts.awards_medals is False
    assert cactus.messages == (
        "config.yaml says awards_medals = True, the catalogue says False; kept the catalogue's",
    )


def test_partial_competitions_say_what_is_missing(small_checkout):
    result = read_mlebench_checkout(small_checkout)
    nyc = result.get("new-york-city-taxi-fare-prediction")
    assert nyc.part("description_obfuscated.md").status == MISSING
    assert nyc.part("description.md").status == READ
    assert nyc.leaderboard.scores == (2.5, 3.0, 4.0, 5.0)  # sorted best first (lower)
    assert any("description_obfuscated.md is missing" in m for m in nyc.messages)
    assert any("worst first" in m for m in nyc.messages)

    titanic = result.get("spaceship-titanic")
    assert titanic.part("config.yaml").status == REFUSED
    assert titanic.config is None
    assert titanic.description == "Rescue passengers.\n"
    assert [p.file for p in titanic.parts if p.status == REFUSED] == [
        "config.yaml",
        "description_obfuscated.md",
        "leaderboard.csv",
    ]
    assert sum("git lfs pull" in m for m in titanic.messages) == 2
    assert "not valid YAML" in titanic.messages[0]
    assert "spaceship-titanic: partial (description.md read)" in titanic.summary()


def test_refused_and_skipped_folders(small_checkout):
    result = read_mlebench_checkout(small_checkout)
    unknown = result.get("not-a-kaggle-competition")
    assert "not in mleboard's catalogue" in unknown.messages[0]
    assert unknown.facts is None and unknown.parts == ()
    wrong_id = result.get("leaf-classification")
    assert "names competition 'denoising-dirty-documents'" in wrong_id.messages[0]
    assert any("description.md is missing" in m for m in wrong_id.messages)
    assert "not a competition folder" in result.get("__pycache__").messages[0]


def test_split_list_differences_are_reported(small_checkout):
    result = read_mlebench_checkout(small_checkout)
    assert result.split_lists["low"][-1] == "mystery-competition"
    text = " | ".join(result.messages)
    assert "low.txt lists mystery-competition, not in our low split" in text
    assert "low.txt does not list aerial-cactus-identification" in text
    assert "experiments/splits/split75.txt is missing" in text


def test_only_some_competitions(small_checkout):
    result = read_mlebench_checkout(
        small_checkout,
        competition_ids=["aerial-cactus-identification", "spooky-author-identification"],
    )
    assert [o.competition_id for o in result.competitions] == [
        "aerial-cactus-identification",
        "spooky-author-identification",
    ]
    absent = result.get("spooky-author-identification")
    assert absent.status == REFUSED and "no folder" in absent.messages[0]
    assert result.missing_competitions == ("spooky-author-identification",)

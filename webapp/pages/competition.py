"""One competition's page: its human private leaderboard drawn, the medal lines and every
agent score placed on it (results' figures, hence here rather than in competitions)."""

from django.db.models import Q
from django.shortcuts import get_object_or_404, render

from webapp import figures
from webapp.competitions import selectors
from webapp.competitions.familiarity import competition_familiarity_rows, competition_texts
from webapp.competitions.models import Competition
from webapp.core.formatting import format_scores_alike, format_statistic
from webapp.results.selectors import agent_scores_on_competition

# Where an MLE-bench competition was held (MLE-bench's ids are Kaggle's).
KAGGLE_URL = "https://www.kaggle.com/competitions/{slug}"


def competition_detail(request, slug: str):
    competition = get_object_or_404(Competition.objects.prefetch_related("splits"), slug=slug)
    board = competition.current_leaderboard
    agent_scores = agent_scores_on_competition(competition, user=request.user)
    figure = None
    thresholds = {}
    if board is not None:
        keys = ("gold", "silver", "bronze", "median")
        # To the same decimals, so that the medal lines read as one column.
        thresholds = dict(
            zip(
                keys,
                format_scores_alike([getattr(board, f"{k}_threshold") for k in keys]),
                strict=True,
            )
        )
        figure = figures.leaderboard_distribution(
            selectors.competition_scores(board),
            {
                "gold": board.gold_threshold,
                "silver": board.silver_threshold,
                "bronze": board.bronze_threshold,
                "median": board.median_threshold,
            },
            lower_is_better=board.lower_is_better,
            agent_scores=[
                (row["experiment_name"], row["label"], row["score"])
                for row in agent_scores
                if row["score"] is not None
            ],
            population_label="Synthetic reference population"
            if board.is_synthetic
            else "Human teams",
        )
    return render(
        request,
        "competitions/detail.html",
        {
            "competition": competition,
            "board": board,
            "older_boards": competition.leaderboards.filter(~Q(pk=board.pk) if board else Q()),
            "figure": figure,
            "thresholds": thresholds,
            "agent_scores": agent_scores,
            "experiments_run": experiments_on_competition(agent_scores),
            "kaggle_url": "" if competition.is_demo else KAGGLE_URL.format(slug=competition.slug),
            "known_issues": selectors.competition_known_issues(competition),
            "familiarity": _familiarity_rows(competition),
            "familiarity_texts": competition_texts(competition),
        },
    )


def _familiarity_rows(competition) -> list[dict]:
    return [
        {
            **row,
            "value_text": format_statistic(row["value"], 4),
            "texts_text": ", ".join(t["name"] for t in row["texts"]),
        }
        for row in competition_familiarity_rows(competition)
    ]


def experiments_on_competition(agent_scores: list[dict]) -> list[dict]:
    """One row per experiment in ``agent_scores`` (``agent_scores_on_competition``'s rows,
    already the visible ones): its name, seeds, how many won any medal, the medals as
    "1 gold, 2 bronze", and its best score, in the order of its best seed."""
    out: dict[int, dict] = {}
    for row in agent_scores:
        entry = out.setdefault(
            row["experiment_id"],
            {
                "experiment_id": row["experiment_id"],
                "name": row["label"].rsplit(" (seed ", 1)[0],
                "seeds": 0,
                "medalled": 0,
                "medals": {},
                "best_text": "",
            },
        )
        entry["seeds"] += 1
        if row["medal"]:
            entry["medalled"] += 1
            entry["medals"][row["medal"]] = entry["medals"].get(row["medal"], 0) + 1
        if not entry["best_text"] and row["score"] is not None:
            entry["best_text"] = row["score_text"]  # the rows come best first
    for entry in out.values():
        entry["medals_text"] = ", ".join(
            f"{entry['medals'][m]} {m}"
            for m in ("gold", "silver", "bronze")
            if m in entry["medals"]
        )
        entry["medalled_text"] = f"{entry['medalled']} of {entry['seeds']}"
    return list(out.values())

"""One competition's page: its human private leaderboard drawn, the medal lines and every
agent score placed on it (results' figures, hence here rather than in competitions)."""

from django.db.models import Q
from django.shortcuts import get_object_or_404, render

from webapp import figures
from webapp.competitions import selectors
from webapp.competitions.familiarity import competition_familiarity_rows, competition_texts
from webapp.competitions.models import Competition
from webapp.core.formatting import format_scores_alike, format_statistic
from webapp.results.selectors import agent_scores_on_competition, experiments_on_competition

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

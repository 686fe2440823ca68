"""What an experiment's runs cost in model tokens: per run, per experiment, per medal.

Tokens come per run from one of two places, and every figure says which:

- *metered*: counted by mleboard's model bridge while the run went on (``runner.llm_meter``);
  a run whose endpoint gave no usage for some requests is *estimated* in part;
- *declared*: stated by an upload (per run in its run group's ``metadata.json``, or for the
  experiment as a whole), not checked.

A price per million tokens (prompt and completion apart, per model) turns tokens into a
cost *estimate*: the operator's prices, not an invoice.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from config.parsers import parse_prices as _parse_prices

METERED, DECLARED = "metered", "declared"


@dataclass(frozen=True)
class RunTokens:
    """One run's tokens (None when nothing is known of them) and what the run achieved."""

    prompt_tokens: int | None
    completion_tokens: int | None
    source: str = ""  # METERED | DECLARED | "" (unknown)
    estimated: bool = False  # part of it estimated from text (no usage from the endpoint)
    requests: int | None = None
    any_medal: bool = False

    @property
    def known(self) -> bool:
        return self.prompt_tokens is not None or self.completion_tokens is not None

    @property
    def total(self) -> int:
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


def run_tokens_from_usage(usage: Mapping | None, *, any_medal: bool = False) -> RunTokens:
    """A run's ``RunTokens`` from the usage stored for it: the bridge's meter
    (``source: metered``) or an upload's declaration (``source: declared``)."""
    if not usage:
        return RunTokens(None, None, any_medal=any_medal)
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return RunTokens(
        prompt_tokens=prompt if isinstance(prompt, int) else None,
        completion_tokens=completion if isinstance(completion, int) else None,
        source=str(usage.get("source") or METERED),
        estimated=bool(usage.get("estimated_requests")),
        requests=usage.get("requests") if isinstance(usage.get("requests"), int) else None,
        any_medal=any_medal,
    )


def parse_usage_declaration(value, where: str) -> dict:
    """A declared usage (``{"prompt_tokens": N, "completion_tokens": N}``, optionally
    ``"requests"``) checked: whole numbers, 0 or more. ValueError saying what is wrong."""
    if not isinstance(value, Mapping):
        raise ValueError(
            f"{where} must be an object like "
            '{"prompt_tokens": 120000, "completion_tokens": 30000}'
        )
    out: dict = {}
    for key in ("prompt_tokens", "completion_tokens", "requests"):
        number = value.get(key)
        if number is None:
            continue
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < 2**53:
            raise ValueError(f"{where}: {key} must be a whole number of 0 or more, got {number!r}")
        out[key] = number
    if "prompt_tokens" not in out and "completion_tokens" not in out:
        raise ValueError(f"{where} names neither prompt_tokens nor completion_tokens")
    unknown = sorted(
        set(value) - {"prompt_tokens", "completion_tokens", "requests", "total_tokens"}
    )
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(map(repr, unknown[:5]))}")
    return {**out, "source": DECLARED}


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    prompt: float
    completion: float


def parse_prices(text: str) -> dict[str, Price]:
    """``"gpt-4o=2.5/10,o1-preview=15/60"``: per model, dollars per million prompt tokens
    and per million completion tokens (read by ``config.parsers.parse_prices``, as the
    setting ``MLEBOARD_LLM_PRICES`` is). ValueError naming what is wrong."""
    return {model: Price(*values) for model, values in _parse_prices(text).items()}


def cost_estimate(
    prompt_tokens: float, completion_tokens: float, price: Price | None
) -> float | None:
    """Dollars for so many tokens at ``price`` (None without a price)."""
    if price is None:
        return None
    return (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1e6


def token_figures(
    runs: Iterable[RunTokens],
    *,
    declared_total: Mapping | None = None,
    price: Price | None = None,
) -> dict:
    """An experiment's token figures.

    ``runs`` are its graded runs. Per-run counts (metered or declared) are used where
    known; an experiment whose runs carry none but which declares a total
    (``declared_total``) spreads it evenly over its runs. Returns::

        {"runs": n, "runs_with_tokens": m, "source": "metered" | "declared" | "mixed" | "",
         "estimated_runs": e, "prompt_tokens": P, "completion_tokens": C, "total_tokens": T,
         "per_run": {"prompt": ., "completion": ., "total": .}, "medals": k,
         "per_medal": T / k or None, "cost": dollars or None, "cost_per_medal": ...}

    Per-run and per-medal figures are over the runs with tokens only (a run without is not
    counted as costing nothing).
    """
    runs = list(runs)
    known = [r for r in runs if r.known]
    out: dict = {"runs": len(runs), "runs_with_tokens": len(known)}
    if known:
        prompt = sum(r.prompt_tokens or 0 for r in known)
        completion = sum(r.completion_tokens or 0 for r in known)
        sources = {r.source for r in known}
        source = sources.pop() if len(sources) == 1 else "mixed"
        medals = sum(r.any_medal for r in known)
        counted = len(known)
        estimated = sum(r.estimated for r in known)
    elif declared_total and runs:
        prompt = declared_total.get("prompt_tokens") or 0
        completion = declared_total.get("completion_tokens") or 0
        source, medals, counted, estimated = DECLARED, sum(r.any_medal for r in runs), len(runs), 0
        out["declared_for_experiment"] = True
    else:
        return {**out, "source": "", "total_tokens": None}
    total = prompt + completion
    cost = cost_estimate(prompt, completion, price)
    out.update(
        {
            "source": source,
            "estimated_runs": estimated,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": total,
            "per_run": {
                "prompt": prompt / counted,
                "completion": completion / counted,
                "total": total / counted,
            },
            "medals": medals,
            "per_medal": total / medals if medals else None,
            "cost": cost,
            "cost_per_run": None if cost is None else cost / counted,
            "cost_per_medal": None if cost is None or not medals else cost / medals,
        }
    )
    return out


def pass_at_k_against_tokens(pass_at_k: Iterable[Mapping], tokens_per_run: float) -> list[dict]:
    """pass@k points with their cost: k attempts at ``tokens_per_run`` each. ``pass_at_k``
    holds ``{"k", "mean", ...}`` as ``benchmark.passk`` gives them."""
    return [
        {**point, "tokens": point["k"] * tokens_per_run}
        for point in pass_at_k
        if isinstance(point.get("k"), int)
    ]


def pareto_frontier(points: Iterable[tuple[float, float]]) -> list[int]:
    """The indices of the points (cost, value) no other point beats, cheapest first: none
    cheaper or as cheap with a higher value. Ties in both keep the first."""
    order = sorted(range(len(points := list(points))), key=lambda i: (points[i][0], -points[i][1]))
    frontier: list[int] = []
    best = -math.inf
    for i in order:
        if points[i][1] > best:
            frontier.append(i)
            best = points[i][1]
    return frontier

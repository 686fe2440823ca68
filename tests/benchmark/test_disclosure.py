"""Disclosure (benchmark/disclosure.py): what a person sends is read field by field, and
the class follows MLE-bench's recommended setup, each reason named, nothing guessed."""

import pytest

from benchmark import disclosure as d

CANONICAL = {
    "gpus": 1,
    "gpu_model": "NVIDIA A10 24GB",
    "vcpus": 36,
    "ram_gib": 440,
    "hours": 24,
    "models": ["gpt-4o"],
    "internet": False,
    "test_labels": False,
    "seeds": 3,
    "selection": "pass@1",
    "source_url": "https://github.com/example/agent",
}


def test_the_recommended_setup_is_canonical():
    values = d.parse(CANONICAL, partial=False)
    assert d.missing(values) == []
    found = d.comparability(values)
    assert (found.cls, found.reasons, found.undisclosed) == (d.CANONICAL, (), ())
    # Less than the setup is within it.
    weaker = {**values, "gpus": 0, "gpu_model": "", "hours": 12.0, "vcpus": 8, "seeds": 5}
    assert d.comparability(weaker).cls == d.CANONICAL


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"gpus": 2}, "2 GPUs"),
        ({"hours": 36}, "36 h"),
        ({"models": ["a", "b", "c", "d"]}, "ensemble of 4 models"),
        ({"test_labels": True, "leakage_url": "https://x.org/leak"}, "uses leaked test labels"),
        ({"seeds": 1}, "1 seed"),
        ({"seeds": 2}, "2 seeds"),
        ({"vcpus": 64}, "64 vCPUs"),
        ({"ram_gib": 1024}, "1024 GiB RAM"),
        ({"gpu_model": "H100 80GB"}, "GPU beyond an A10 24 GB (H100 80GB)"),
        ({"gpu_model": "V100 32GB"}, "GPU beyond an A10 24 GB (V100 32GB)"),
        ({"selection": "best-of-3"}, "best-of-3"),
    ],
)
def test_each_step_beyond_is_named(change, reason):
    found = d.comparability(d.parse({**CANONICAL, **change}))
    assert found.cls == d.BEYOND
    assert found.reasons == (reason,)


def test_unknown_facts_are_undisclosed_never_guessed():
    found = d.comparability(d.parse({"hours": 24, "models": ["o3"]}))
    assert found.cls == d.UNDISCLOSED and found.reasons == ()
    assert "GPUs" in found.undisclosed and "seeds" in found.undisclosed
    # A known step beyond decides the class even with facts unknown.
    beyond = d.comparability(d.parse({"hours": 36}))
    assert beyond.cls == d.BEYOND and beyond.reasons == ("36 h",) and beyond.undisclosed
    assert (
        "GPU model (Quantum X9)"
        in d.comparability({**CANONICAL, "gpu_model": "Quantum X9"}).undisclosed
    )


@pytest.mark.parametrize(
    ("data", "field", "words"),
    [
        ({"gpus": -1}, "gpus", "whole number"),
        ({"gpus": "²"}, "gpus", "whole number"),
        ({"gpus": 1.5}, "gpus", "whole number"),
        ({"gpus": True}, "gpus", "whole number"),
        ({"hours": 1e9}, "hours", "at most"),
        ({"hours": float("nan")}, "hours", "number"),
        ({"hours": "forever"}, "hours", "number"),
        ({"ram_gib": 0}, "ram_gib", "more than"),
        ({"wat": 1}, "wat", "not a disclosure field"),
        ({"models": "a\x00b"}, "models", "NUL"),
        ({"models": ["x" * 20_000]}, "models", "characters long"),
        ({"models": [{"nested": ["deep"]}]}, "models", "text"),
        ({"source_url": "javascript:alert(1)"}, "source_url", "http"),
        ({"selection": "best-of-1"}, "selection", "pass@1 or best-of-K"),
        ({"internet": "maybe"}, "internet", "yes or no"),
    ],
)
def test_bad_input_names_the_field(data, field, words):
    with pytest.raises(d.DisclosureError) as raised:
        d.parse(data)
    assert field in raised.value.errors
    assert words in raised.value.errors[field]


def test_publishing_lists_what_is_missing():
    assert d.missing({}) == [f.name for f in d.FIELDS if f.required]
    assert d.missing({**CANONICAL, "gpu_model": ""}) == ["gpu_model"]
    assert d.missing({**CANONICAL, "test_labels": True}) == ["leakage_url"]
    with pytest.raises(d.DisclosureError) as raised:
        d.parse({"hours": 24}, partial=False)
    assert raised.value.errors["seeds"] == "is missing"


@pytest.mark.parametrize(
    ("cell", "models"),
    [
        ("Ensemble (Claude-Opus-4.5, Claude-Sonnet-4.5, GPT-5.2-Codex, Gemini-3-Pro-Preview)", 4),
        ("o3 + GPT-4.1", 2),
        ("gpt-4o-2024-08-06", 1),
        ("gpt-5 (low verbosity/effort)", 1),
    ],
)
def test_published_llm_cells_name_their_models(cell, models):
    assert len(d.models_from_published(cell)) == models


def test_an_undisclosed_llm_is_none():
    assert d.models_from_published("undisclosed") is None

"""Familiarity as the mean token probability a base model gives a text
(``benchmark.familiarity``), against a named fake endpoint (``tests/support/fake_base_model.py``,
a scripted server, not a model): the value equals what the served log-probabilities make by
hand, long texts are split within the limit and weighted by their tokens, and every way the
endpoint can fail ends, with a reason."""

import math
import socket

import pytest

from benchmark.familiarity import (
    Endpoint,
    FamiliarityError,
    _http_reason,
    competition_familiarity,
    guaranteed_bytes,
    score_text,
)
from tests.support.fake_base_model import FakeBaseModel, expected_familiarity, tokenize

KEY = "sk-familiarity-test-123456"
WORDS = (
    "Participants predict whether a passenger was transported to an alternate dimension "
    "during the collision of the spaceship with a spacetime anomaly. "
)


@pytest.fixture
def fake():
    with FakeBaseModel() as server:
        yield server


def endpoint(fake, **kwargs) -> Endpoint:
    return Endpoint(
        base_url=fake.base_url, model="fake-base", api_key=KEY, **{"retries": 0, **kwargs}
    )


def test_a_short_text_is_one_request_and_its_value_is_the_mean_token_probability(fake):
    text = "The competition asks for the probability that each image shows a cactus."
    score = score_text(text, endpoint(fake))
    [request] = fake.requests
    body = request["body"]
    assert body["prompt"] == text and body["model"] == "fake-base"
    assert (body["echo"], body["logprobs"], body["max_tokens"]) == (True, 0, 1)
    assert body["authorization"] == f"Bearer {KEY}"
    # By hand: the prompt's tokens after the first (which has none); the generated token
    # the endpoint appends is not the text's.
    served = request["token_logprobs"]
    assert served[0] is None and len(served) == len(tokenize(text))
    by_hand = sum(math.exp(v) for v in served[1:]) / (len(served) - 1)
    assert score.value == pytest.approx(by_hand)
    assert score.tokens == len(served) - 1
    assert score.chunks == [
        {"bytes": len(text.encode()), "tokens": len(served), "scored": len(served) - 1}
    ]


def test_a_long_text_is_split_within_the_limit_and_weighted_by_its_tokens(fake):
    fake.context_tokens = 64
    text = WORDS * 40
    score = score_text(text, endpoint(fake, max_tokens=64))
    prompts = [r["prompt"] for r in fake.requests]
    assert "".join(prompts) == text  # every byte sent once, in order
    assert all(len(tokenize(p)) <= 64 for p in prompts)
    # The first chunk is cut to the guaranteed bound; later ones are sized from the
    # tokens measured, so they are longer (fewer requests than bytes alone would need).
    assert len(prompts[0].encode()) <= guaranteed_bytes(64)
    assert max(len(p.encode()) for p in prompts[1:]) > guaranteed_bytes(64)
    assert len(prompts) < len(text.encode()) / guaranteed_bytes(64)
    value, tokens = expected_familiarity(fake.requests)
    assert score.value == pytest.approx(value) and score.tokens == tokens
    # Weighted by tokens: the value is not the plain mean of the chunks' means.
    assert sum(c["scored"] for c in score.chunks) == tokens
    assert len(score.chunks) == len(prompts)


def test_a_chunk_the_endpoint_refuses_is_sent_again_within_the_guaranteed_bound(fake):
    """Long words first (many bytes a token), then one-letter words (two bytes a token):
    the size measured on the first part is too much for the second, the endpoint refuses
    it (HTTP 400, past its context) and it is sent again cut to the bound."""
    fake.context_tokens = 60
    text = "Transformers hallucinate everywhere " * 30 + "a b c d e f g h " * 60
    score = score_text(text, endpoint(fake, max_tokens=60))
    assert fake.refused >= 1
    accepted = fake.requests  # the fake records only what it answered
    assert "".join(r["prompt"] for r in accepted) == text
    assert all(len(r["tokens"]) <= 60 for r in accepted)
    value, tokens = expected_familiarity(accepted)
    assert score.value == pytest.approx(value) and score.tokens == tokens


def test_without_usage_the_text_offsets_tell_the_prompts_tokens(fake):
    fake.mode = "no_usage"
    text = WORDS * 3
    score = score_text(text, endpoint(fake))
    value, tokens = expected_familiarity(fake.requests)
    assert score.value == pytest.approx(value) and score.tokens == tokens


def test_multibyte_text_is_cut_between_characters(fake):
    fake.context_tokens = 40
    text = ("Données d'entraînement — 数据集 🐳 " * 50).strip()
    score = score_text(text, endpoint(fake, max_tokens=40))
    assert "".join(r["prompt"] for r in fake.requests) == text
    assert score.value == pytest.approx(expected_familiarity(fake.requests)[0])


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "mode, reason",
    [
        ("http_500", 'the endpoint answered HTTP 500: {"error": "the model server fell over"}'),
        ("not_json", "the endpoint's answer is not JSON"),
        ("nested_json", "the endpoint's answer is not JSON"),
        ("no_logprobs", "no choices[0].logprobs.token_logprobs"),
        ("bad_logprob", "a token log-probability is 3.0"),
        ("hang", "did not answer within 1 s"),
        ("trickle", "did not answer within 1 s"),
    ],
)
def test_every_way_the_endpoint_fails_ends_with_a_reason(fake, mode, reason):
    fake.mode = mode
    with pytest.raises(FamiliarityError) as caught:
        score_text(WORDS, endpoint(fake, timeout_s=1.0))
    assert reason in str(caught.value)
    assert KEY not in str(caught.value) and "127.0.0.1" not in str(caught.value)


@pytest.mark.timeout(60)
def test_failures_are_retried_then_reported(fake):
    fake.mode = "http_500"
    with pytest.raises(FamiliarityError, match="HTTP 500"):
        score_text(WORDS, endpoint(fake, retries=2, backoff_s=0.0))
    # The first request and its two retries, then the error: no more, no fewer.
    assert fake.failed == 3
    # The 500s are not recorded as served; a working endpoint after a failure answers.
    assert fake.requests == []
    fake.mode = "ok"
    assert score_text(WORDS, endpoint(fake, retries=2, backoff_s=0.0)).value is not None
    assert fake.failed == 3 and fake.requests


def test_an_endpoint_nobody_listens_on_and_other_refusals():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    closed = Endpoint(base_url=f"http://127.0.0.1:{port}/v1", model="m", retries=0)
    with pytest.raises(FamiliarityError, match="could not reach the endpoint"):
        score_text(WORDS, closed)
    with pytest.raises(FamiliarityError, match="empty"):
        score_text("  \n", closed)
    with pytest.raises(FamiliarityError, match="http"):
        Endpoint(base_url="file:///etc/passwd", model="m")
    with pytest.raises(FamiliarityError, match="at least"):
        Endpoint(base_url="http://x/v1", model="m", max_tokens=4)
    # A key an endpoint echoes in an error is masked.
    assert "********" in _http_reason(401, f"bad key {KEY}".encode(), KEY)
    assert KEY not in _http_reason(401, f"bad key {KEY}".encode(), KEY)


def test_a_competition_averages_its_texts_each_once(fake):
    description = score_text(WORDS * 5, endpoint(fake))
    post = score_text("A discussion post about leaks.", endpoint(fake))
    assert competition_familiarity([description, post]) == pytest.approx(
        (description.value + post.value) / 2
    )

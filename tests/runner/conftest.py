"""Fixtures for the runner's tests: a tiny prepared competition, the real Docker engine,
and images built once per session (cached by content tag, so reruns skip the build)."""

from __future__ import annotations

import csv
import shutil
import uuid
from pathlib import Path

import pytest

from runner.agent_definition import find_agent

COMPETITION = "demo-breast-cancer"


DEMO_DESCRIPTIONS = {
    "demo-breast-cancer": "Predict whether a breast mass is malignant (target = 1). Submit a "
    "probability for `target` for every id in test.csv. Metric: ROC AUC.",
    "demo-digits": "Classify 8x8 images of handwritten digits. Predict `label` for every id in "
    "test.csv. Metric: accuracy.",
    "demo-diabetes": "Predict disease progression. Submit `target` for every id in test.csv. "
    "Metric: RMSE (lower is better).",
    "demo-wine": "Predict the cultivar (0, 1 or 2) of a wine. Submit the probabilities class_0, "
    "class_1, class_2 for every id in test.csv. Metric: multi-class log loss.",
}


def write_demo(data_dir: Path, competition: str = COMPETITION, canary: str | None = None) -> Path:
    """MLE-bench's prepared layout for a demo competition from scikit-learn's bundled data
    (every fifth row held out as the test set; answers in ``private/test.csv``).

    With ``canary``, the private answers carry that string (in a column and a file) so that
    a test can search for it from inside the agent's container.
    """
    from sklearn import datasets

    loader = {
        "demo-breast-cancer": datasets.load_breast_cancer,
        "demo-digits": datasets.load_digits,
        "demo-diabetes": datasets.load_diabetes,
        "demo-wine": datasets.load_wine,
    }[competition]
    bunch = loader()
    if competition == "demo-digits":
        names = [f"pixel_{i}" for i in range(bunch.data.shape[1])]
    else:
        names = [str(n).replace(" ", "_") for n in bunch.feature_names]
    target = "label" if competition == "demo-digits" else "target"
    rows = list(zip(bunch.data.tolist(), bunch.target.tolist(), strict=True))
    test_rows, train_rows = rows[::5], [r for i, r in enumerate(rows) if i % 5]
    public = data_dir / competition / "prepared" / "public"
    private = data_dir / competition / "prepared" / "private"
    public.mkdir(parents=True)
    private.mkdir(parents=True)

    def write(path: Path, header: list[str], body: list[list]) -> None:
        with path.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            writer.writerows(body)

    write(
        public / "train.csv",
        ["id", *names, target],
        [[f"r{i}", *x, y] for i, (x, y) in enumerate(train_rows)],
    )
    write(
        public / "test.csv", ["id", *names], [[f"t{i}", *x] for i, (x, _) in enumerate(test_rows)]
    )
    ids = [f"t{i}" for i in range(len(test_rows))]
    if competition == "demo-wine":
        sample = (["id", "class_0", "class_1", "class_2"], [[i, 1 / 3, 1 / 3, 1 / 3] for i in ids])
    elif competition == "demo-digits":
        sample = (["id", "label"], [[i, 0] for i in ids])
    elif competition == "demo-diabetes":
        sample = (["id", "target"], [[i, 150.0] for i in ids])
    else:
        sample = (["id", "target"], [[i, 0.5] for i in ids])
    write(public / "sample_submission.csv", *sample)
    (public / "description.md").write_text(f"# {competition}\n\n{DEMO_DESCRIPTIONS[competition]}\n")
    answers_header = ["id", target] + (["canary"] if canary else [])
    write(
        private / "test.csv",
        answers_header,
        [[i, y] + ([canary] if canary else []) for i, (_, y) in zip(ids, test_rows, strict=True)],
    )
    if canary:
        (private / "canary.txt").write_text(canary)
    return data_dir


def write_breast_cancer(data_dir: Path, canary: str | None = None) -> Path:
    """``write_demo`` for demo-breast-cancer."""
    return write_demo(data_dir, COMPETITION, canary)


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A prepared-data root holding demo-breast-cancer (answers included)."""
    return write_breast_cancer(tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="session")
def canary() -> str:
    return f"MLEBOARD-CANARY-{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def canary_data(tmp_path_factory: pytest.TempPathFactory, canary: str) -> Path:
    """Like ``demo_data`` but the private answers hold a canary string."""
    return write_breast_cancer(tmp_path_factory.mktemp("canary-data"), canary=canary)


@pytest.fixture(scope="session")
def docker_client():
    """The real engine. Missing engine = failure (not a skip): these tests must run in CI."""
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:  # noqa: BLE001 - any way of "no engine" fails the same
        pytest.fail(f"Docker engine not reachable ({exc}); start it with scripts/docker-up.sh")
    return client


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:
    """The base image (debootstrap + import; a no-op when the tag exists already)."""
    from runner.images import build_base_image

    return build_base_image(docker_client).ref


@pytest.fixture(scope="session")
def agent_images(docker_client, base_image) -> dict[str, str]:
    """The dummy and baseline agents' images, built from their folders."""
    from runner.images import build_agent_image

    return {
        name: build_agent_image(docker_client, find_agent(name)).ref
        for name in ("dummy", "baseline")
    }


@pytest.fixture
def no_leftover_containers(docker_client):
    """Asserts after the test that it left no run container of its competition on the
    engine (others' runs on a shared engine, started before it, for other competitions or
    by another ``$MLEBOARD_INSTANCE``, such as another test process's, are not its
    business and are left alone)."""
    from runner.reaper import LABEL_COMPETITION, own_containers_filter

    def ours() -> dict[str, object]:
        found = docker_client.containers.list(
            all=True, filters=own_containers_filter({LABEL_COMPETITION: COMPETITION})
        )
        return {c.id: c for c in found}

    before = set(ours())
    yield
    left = [c for cid, c in ours().items() if cid not in before]
    names = [c.name for c in left]
    for container in left:
        container.remove(force=True)
    assert not names, f"containers left behind: {names}"


@pytest.fixture
def copy_agent(tmp_path: Path):
    """Copy a shipped agent's folder (to edit it in a test without touching the original)."""

    def copy(name: str) -> Path:
        target = tmp_path / f"agent-{name}"
        shutil.copytree(find_agent(name).directory, target)
        return target

    return copy

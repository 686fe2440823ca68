"""Our similarity against Dolos itself (``@dodona/dolos-lib``, pinned in tools/dolos/).

Needs Node and ``npm ci --prefix tools/dolos``, which the README's test command installs
(scripts/test-deps.sh); without them the test fails, it is never skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchmark.integrity import winnowing
from benchmark.integrity.winnowing import python_tokens, similarity
from tests.support.integrity_corpus import PAIRS
from tests.support.scaffold_corpus import SOLUTIONS, TEMPLATE

ROOT = Path(__file__).resolve().parents[2]
DOLOS_DIR = ROOT / "tools" / "dolos"
SCRIPT = DOLOS_DIR / "dolos_pairs.mjs"
TOLERANCE = 0.02


def _dolos(request: dict) -> dict:
    node = shutil.which("node")
    installed = (DOLOS_DIR / "node_modules" / "@dodona" / "dolos-lib").is_dir()
    if node is None or not installed:
        why = "node is not installed" if node is None else "run npm ci --prefix tools/dolos"
        pytest.fail(f"Dolos is missing ({why}): `make test` installs it")
    done = subprocess.run(
        [node, str(SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=DOLOS_DIR,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def dolos_pairs() -> dict:
    names = sorted(PAIRS)
    answer = _dolos({"pairs": [{"a": PAIRS[n][0], "b": PAIRS[n][1]} for n in names]})
    return {
        name: (value, fragments)
        for name, value, fragments in zip(
            names, answer["similarities"], answer["fragments"], strict=True
        )
    }


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pair_similarity_agrees_with_dolos(dolos_pairs, name):
    expected, _ = dolos_pairs[name]
    ours = similarity(*PAIRS[name], "python").similarity
    assert abs(ours - expected) <= TOLERANCE, (name, ours, expected)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_fragments_agree_with_dolos(dolos_pairs, name):
    _, expected = dolos_pairs[name]
    ours = similarity(*PAIRS[name], "python").fragments
    assert sorted((list(f.a_lines), list(f.b_lines)) for f in ours) == sorted(
        (f["a"], f["b"]) for f in expected
    )


def test_token_streams_are_dolos_own():
    files = [ROOT / "runner" / "agents" / "baseline" / "main.py", ROOT / "benchmark" / "medals.py"]
    texts = [p.read_text(encoding="utf-8") for p in files] + [PAIRS["partial"][1]]
    answer = _dolos({"tokens": texts})
    for text, tokens in zip(texts, answer["tokens"], strict=True):
        assert python_tokens(text)[0] == tokens


# ---------------------------------------------------------------- ignored fingerprints


def _corpus_folders(tmp_path, split: int = 9) -> tuple[Path, Path, list[tuple[str, str]]]:
    """The scaffold corpus as two folders, and its files in the order Dolos is given them
    (the submissions, then the references, each in name order: Dolos' left file of a
    pair is the earlier one, and the CLI's the submission)."""
    names = sorted(SOLUTIONS)
    subs, refs = tmp_path / "subs", tmp_path / "refs"
    for folder, chosen in ((subs, names[:split]), (refs, names[split:])):
        folder.mkdir()
        for name in chosen:
            (folder / name).write_text(SOLUTIONS[name], encoding="utf-8")
    order = [(n, SOLUTIONS[n]) for n in names[:split]] + [(n, SOLUTIONS[n]) for n in names[split:]]
    return subs, refs, order


def _cli_pairs(capsys, subs, refs, *options) -> dict[tuple[str, str], dict]:
    from cli import main as cli

    argv = ["similarity", "--submissions", str(subs), "--references", str(refs)]
    assert cli.main([*argv, "--threshold", "0", *options]) == 0
    return {(m["submission"], m["reference"]): m for m in json.loads(capsys.readouterr().out)}


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.8])
def test_max_fingerprint_percentage_agrees_with_dolos(tmp_path, capsys, fraction):
    """``mleboard similarity --max-fingerprint-percentage`` against Dolos analysing the
    same files with the same maxFingerprintPercentage: every submission x reference pair
    within 0.02 (the same fragments too)."""
    subs, refs, order = _corpus_folders(tmp_path)
    ours = _cli_pairs(capsys, subs, refs, "--max-fingerprint-percentage", str(fraction))
    files = [{"path": name, "text": text} for name, text in order]
    answer = _dolos({"corpora": [{"files": files, "maxFingerprintPercentage": fraction}]})
    submissions = {p.name for p in subs.iterdir()}
    compared = 0
    for pair in answer["corpora"][0]:
        if pair["left"] not in submissions or pair["right"] in submissions:
            continue  # Dolos pairs every two files; the command, submissions with references
        match = ours[(pair["left"], pair["right"])]
        assert abs(match["similarity"] - pair["similarity"]) <= TOLERANCE, (pair, match)
        assert sorted((f["a_lines"], f["b_lines"]) for f in match["fragments"]) == sorted(
            (f["a"], f["b"]) for f in pair["fragments"]
        )
        compared += 1
    assert compared == len(ours) == 9 * (len(SOLUTIONS) - 9)


def test_an_ignored_template_agrees_with_dolos(tmp_path, capsys):
    subs, refs, order = _corpus_folders(tmp_path)
    template = tmp_path / "template.py"
    template.write_text(TEMPLATE, encoding="utf-8")
    ours = _cli_pairs(capsys, subs, refs, "--ignore", str(template))
    files = [{"path": name, "text": text} for name, text in order]
    answer = _dolos({"corpora": [{"files": files, "ignore": TEMPLATE}]})
    submissions = {p.name for p in subs.iterdir()}
    worst = max(
        abs(ours[(p["left"], p["right"])]["similarity"] - p["similarity"])
        for p in answer["corpora"][0]
        if p["left"] in submissions and p["right"] not in submissions
    )
    assert worst <= TOLERANCE


def _dolos_by_pair(fraction: float) -> dict[frozenset, dict]:
    """Dolos' pairs of the whole scaffold corpus given in name order, by their two names."""
    files = [{"path": n, "text": SOLUTIONS[n]} for n in sorted(SOLUTIONS)]
    answer = _dolos({"corpora": [{"files": files, "maxFingerprintPercentage": fraction}]})
    return {frozenset((p["left"], p["right"])): p for p in answer["corpora"][0]}


def _assert_as_dolos(match: dict, pair: dict) -> None:
    """One pair of the command as Dolos' pair of the same files, whichever side of the
    command Dolos' left file was on (the fragments' sides follow the command's)."""
    assert abs(match["similarity"] - pair["similarity"]) <= TOLERANCE, (pair, match)
    ours = [(f["a_lines"], f["b_lines"]) for f in match["fragments"]]
    if pair["left"] != match["submission"]:
        ours = [(b, a) for a, b in ours]
    assert sorted(ours) == sorted((f["a"], f["b"]) for f in pair["fragments"]), pair


def test_a_pairs_figure_does_not_depend_on_the_side_its_files_are_given_on(tmp_path, capsys):
    """With fingerprints ignored, Dolos' figure for a pair depends on which file it was
    given first; the command's must not depend on which folder holds which file. The
    corpus split in two (every other name), compared both ways round: every pair as
    Dolos gives it for all the files in name order, each way."""
    names = sorted(SOLUTIONS)
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, chosen in ((one, names[::2]), (two, names[1::2])):
        folder.mkdir()
        for name in chosen:
            (folder / name).write_text(SOLUTIONS[name], encoding="utf-8")
    option = ("--max-fingerprint-percentage", "0.5")
    forward = _cli_pairs(capsys, one, two, *option)
    backward = _cli_pairs(capsys, two, one, *option)
    dolos = _dolos_by_pair(0.5)
    assert len(forward) == len(backward) == len(names[::2]) * len(names[1::2])
    for (sub, ref), match in forward.items():
        assert backward[(ref, sub)]["similarity"] == match["similarity"]
        _assert_as_dolos(match, dolos[frozenset((sub, ref))])
        _assert_as_dolos(backward[(ref, sub)], dolos[frozenset((sub, ref))])


def test_one_folder_on_both_sides_gives_each_pair_once_as_dolos(tmp_path, capsys):
    """``--references D --submissions D``: every two files of D once, never a file with
    itself, the earlier name as the submission (Dolos' left file), the figure Dolos'."""
    folder = tmp_path / "solutions"
    folder.mkdir()
    for name, text in SOLUTIONS.items():
        (folder / name).write_text(text, encoding="utf-8")
    ours = _cli_pairs(capsys, folder, folder, "--max-fingerprint-percentage", "0.5")
    dolos = _dolos_by_pair(0.5)
    assert len(ours) == len(dolos) == len(SOLUTIONS) * (len(SOLUTIONS) - 1) // 2
    for (sub, ref), match in ours.items():
        pair = dolos[frozenset((sub, ref))]
        assert (sub, ref) == (pair["left"], pair["right"])
        _assert_as_dolos(match, pair)


def test_the_pinned_dolos_still_takes_the_left_files_ignored_count_twice():
    """dolos-core 1.2.1's Pair takes the left file's number of ignored fingerprints for
    the right file too; ``winnowing.DOLOS_RIGHT_IGNORED_FROM_LEFT`` follows it. When a
    Dolos with the upstream fix is pinned, this fails: set that constant to False."""
    names = sorted(SOLUTIONS)
    files = [{"path": n, "text": SOLUTIONS[n]} for n in names]
    answer = _dolos({"corpora": [{"files": files, "maxFingerprintPercentage": 0.5}]})
    differ = [p for p in answer["corpora"][0] if abs(p["similarity"] - p["fixed"]) > 1e-9]
    assert bool(differ) == winnowing.DOLOS_RIGHT_IGNORED_FROM_LEFT

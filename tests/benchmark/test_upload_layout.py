"""What an extracted upload holds: run groups, submissions.jsonl, grading reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.archive import ArchiveLimits, extract_archive
from benchmark.catalogue import load_catalogue
from benchmark.upload_layout import (
    UploadLayoutError,
    competition_of,
    read_upload,
)
from tests.support import archive_builders as build

KNOWN = set(load_catalogue())
A, B, C = "spaceship-titanic", "aerial-cactus-identification", "denoising-dirty-documents"


def tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        build.write_file(root / name, data)
    return root


def read(root: Path, **kwargs):
    return read_upload(root, known_competitions=KNOWN, **kwargs)


def summary(contents) -> list[tuple[str, int, str, bool]]:
    return sorted(
        (r.competition_id, r.seed, r.run_group, r.submission_path is not None)
        for r in contents.runs
    )


# --- run groups ----------------------------------------------------------------------------


def test_run_groups_from_an_archive_end_to_end(tmp_path):
    files = {
        **build.run_group_files("2024-10-01_run-group_aide", [A, B, C], without_submission=[C]),
        **build.run_group_files("2024-10-02_run-group_aide", [A, B, C]),
        **build.run_group_files("2024-10-03_run-group_aide", [A, B, C]),
    }
    archive = build.write_file(tmp_path / "upload.zip", build.zip_bytes(files))
    root = tmp_path / "extracted"
    extract_archive(archive, root, ArchiveLimits())
    contents = read(root)
    assert contents.kind == "run_groups"
    assert contents.reported == ()
    assert len(contents.runs) == 9
    assert summary(contents)[:3] == [
        (B, 0, "2024-10-01_run-group_aide", True),
        (B, 1, "2024-10-02_run-group_aide", True),
        (B, 2, "2024-10-03_run-group_aide", True),
    ]
    no_submission = [r for r in contents.runs if r.submission_path is None]
    assert [(r.competition_id, r.seed) for r in no_submission] == [(C, 0)]
    run = next(r for r in contents.runs if r.competition_id == A and r.seed == 1)
    assert run.run_name == build.run_id(A, 0, "2024-10-02_run-group_aide")
    assert run.submission_path == root / run.run_group / run.run_name / "submission/submission.csv"
    assert run.submission_path.read_bytes() == build.SUBMISSION_CSV
    assert run.logs_path.is_dir() and run.code_path.is_dir()
    assert no_submission[0].logs_path is not None
    assert contents.warnings == ()


def test_run_groups_nested_under_a_top_folder_with_given_seeds(tmp_path):
    files = {
        **build.run_group_files("rg-b", [A], prefix="runs/"),
        **build.run_group_files("rg-a", [A], prefix="runs/"),
    }
    contents = read(tree(tmp_path, files), seeds={"rg-a": 7, "rg-b": 3})
    assert summary(contents) == [(A, 3, "rg-b", True), (A, 7, "rg-a", True)]


def test_a_seed_missing_from_the_given_seeds(tmp_path):
    files = {**build.run_group_files("rg-a", [A]), **build.run_group_files("rg-b", [A])}
    with pytest.raises(UploadLayoutError, match="no seed was given for run group.*rg-b"):
        read(tree(tmp_path, files), seeds={"rg-a": 0})


def test_the_upload_is_the_run_group_itself(tmp_path):
    files = build.run_group_files("rg", [A, B])
    root = tree(tmp_path / "x", {k.removeprefix("rg/"): v for k, v in files.items()})
    contents = read(root)
    assert summary(contents) == [(B, 0, "rg", True), (A, 0, "rg", True)]


def test_n_seeds_in_one_run_group_are_seeded_by_position(tmp_path):
    files = build.run_group_files("rg", [A, B], runs_per_competition=3)
    contents = read(tree(tmp_path, files))
    a_runs = sorted((r.run_name, r.seed) for r in contents.runs if r.competition_id == A)
    assert [seed for _name, seed in a_runs] == [0, 1, 2]  # by sorted run-folder name
    assert len(contents.runs) == 6
    assert any("assigned by position" in w for w in contents.warnings)


def test_several_multi_seed_groups_take_consecutive_seeds(tmp_path):
    files = {
        **build.run_group_files("rg-1", [A], runs_per_competition=2),
        **build.run_group_files("rg-2", [A, B], runs_per_competition=2),
    }
    contents = read(tree(tmp_path, files))
    assert summary(contents) == [
        (B, 2, "rg-2", True),
        (B, 3, "rg-2", True),
        (A, 0, "rg-1", True),
        (A, 1, "rg-1", True),
        (A, 2, "rg-2", True),
        (A, 3, "rg-2", True),
    ]


def test_given_seeds_that_collide_are_refused(tmp_path):
    files = {**build.run_group_files("rg-1", [A]), **build.run_group_files("rg-2", [A])}
    with pytest.raises(UploadLayoutError, match=f"two runs for competition {A} with seed 4"):
        read(tree(tmp_path, files), seeds={"rg-1": 4, "rg-2": 4})


def test_run_listed_in_metadata_without_a_folder_is_no_submission(tmp_path):
    files = build.run_group_files("rg", [A])
    metadata = json.loads(files["rg/metadata.json"])
    metadata["runs"][f"{B}_lost"] = {"success": False}
    files["rg/metadata.json"] = json.dumps(metadata).encode()
    contents = read(tree(tmp_path, files))
    lost = next(r for r in contents.runs if r.competition_id == B)
    assert (lost.submission_path, lost.logs_path, lost.run_name) == (None, None, f"{B}_lost")
    assert any(f"{B}_lost" in w and "no submission" in w for w in contents.warnings)


def test_invalid_metadata_json_is_named(tmp_path):
    files = build.run_group_files("rg", [A], prefix="top/")
    files["top/rg/metadata.json"] = b'{"runs": {'
    with pytest.raises(UploadLayoutError, match=r"top/rg/metadata.json is not valid JSON"):
        read(tree(tmp_path, files))


def test_unknown_competitions_are_counted_and_named(tmp_path):
    files = build.run_group_files("rg", [A, "made-up-one", "made-up-two"])
    with pytest.raises(UploadLayoutError) as refused:
        read(tree(tmp_path, files))
    assert "2 competition(s) mleboard does not know: made-up-one, made-up-two" in str(refused.value)


def test_many_unknown_competitions_name_the_first_few(tmp_path):
    files = build.run_group_files("rg", [f"nope-{i}" for i in range(8)])
    with pytest.raises(UploadLayoutError, match=r"8 competition\(s\).*nope-0.*\(and 3 more\)"):
        read(tree(tmp_path, files))


def test_competition_is_the_longest_known_prefix():
    known = {"comp", "comp_extra", "other"}
    assert competition_of("comp_extra_1234", known) == "comp_extra"
    assert competition_of("comp_1234", known) == "comp"
    assert competition_of("comp", known) == "comp"
    assert competition_of("compx_1", known) is None


def test_stray_folders_in_a_run_group_are_ignored_with_a_warning(tmp_path):
    files = {**build.run_group_files("rg", [A]), "rg/notes/readme.txt": b"hi"}
    contents = read(tree(tmp_path, files))
    assert len(contents.runs) == 1
    assert any("rg/notes/" in w for w in contents.warnings)


# --- submissions.jsonl ---------------------------------------------------------------------


def jsonl_upload(root: Path, lines: list[dict], extra: dict[str, bytes]) -> Path:
    return tree(root, {"sub/submissions.jsonl": build.submissions_jsonl(lines), **extra})


def test_jsonl_paths_resolve_inside_the_upload(tmp_path):
    lines = [
        {"competition_id": A, "submission_path": "csv/a.csv", "logs_path": "logs/a"},
        {"competition_id": A, "submission_path": "/home/me/runs/x/csv/a2.csv"},  # absolute
        {"competition_id": B, "submission_path": "../elsewhere/b.csv", "seed": 1},  # inside root
        {"competition_id": B, "submission_path": "gone/missing.csv"},  # missing: no submission
        {"competition_id": C, "submission_path": None, "code_path": "/abs/code/c"},
    ]
    extra = {
        "sub/csv/a.csv": b"a",
        "sub/logs/a/run.log": b"l",
        "deep/x/csv/a2.csv": b"a2",
        "elsewhere/b.csv": b"b",
        "code/c/main.py": b"c",
    }
    root = jsonl_upload(tmp_path, lines, extra)
    contents = read(root)
    assert contents.kind == "jsonl"
    got = [(r.competition_id, r.seed, r.submission_path) for r in contents.runs]
    assert got == [
        (A, 0, root / "sub/csv/a.csv"),
        (A, 1, root / "deep/x/csv/a2.csv"),
        (B, 1, root / "elsewhere/b.csv"),
        (B, 0, None),  # seeds by appearance skip the seed another line names
        (C, 0, None),
    ]
    assert contents.runs[0].logs_path == root / "sub/logs/a"
    assert contents.runs[4].code_path == root / "code/c"
    assert contents.runs[0].run_group == "submissions-seed0"
    assert contents.runs[3].run_name == "submissions.jsonl:4"
    assert [w for w in contents.warnings if "gone/missing.csv" in w and "no submission" in w]


def test_relative_path_not_found_is_matched_by_suffix(tmp_path):
    lines = [{"competition_id": A, "submission_path": "runs/rg/a_1/submission/submission.csv"}]
    extra = {
        "rg/a_1/submission/submission.csv": b"a",
        "rg/a_2/submission/submission.csv": b"other",
    }
    contents = read(jsonl_upload(tmp_path, lines, extra))
    assert contents.runs[0].submission_path == tmp_path / "rg/a_1/submission/submission.csv"


def test_ambiguous_suffix_is_refused(tmp_path):
    lines = [{"competition_id": A, "submission_path": "/somewhere/submission.csv"}]
    extra = {"x/submission.csv": b"a", "y/submission.csv": b"b"}
    with pytest.raises(UploadLayoutError, match="matches several uploaded files"):
        read(jsonl_upload(tmp_path, lines, extra))


def test_path_escaping_the_upload_is_refused(tmp_path):
    lines = [{"competition_id": A, "submission_path": "../../etc/passwd"}]
    with pytest.raises(
        UploadLayoutError, match=r"line 1 of sub/submissions.jsonl.*outside the upload"
    ):
        read(jsonl_upload(tmp_path / "root", lines, {}))


def test_bad_json_line_is_named(tmp_path):
    text = build.submissions_jsonl([{"competition_id": A, "submission_path": "a.csv"}])
    root = tree(tmp_path, {"submissions.jsonl": text + b"// a comment\n\n{broken\n"})
    with pytest.raises(UploadLayoutError, match="line 4 of submissions.jsonl is not valid JSON"):
        read(root)


def test_jsonl_duplicate_seed_is_refused(tmp_path):
    lines = [{"competition_id": A, "submission_path": "a.csv", "seed": 0}] * 2
    with pytest.raises(UploadLayoutError, match=f"two runs for competition {A} with seed 0"):
        read(jsonl_upload(tmp_path, lines, {}))


def test_jsonl_unknown_competition(tmp_path):
    lines = [{"competition_id": "not-a-competition", "submission_path": "a.csv"}]
    with pytest.raises(UploadLayoutError, match="1 competition.*not-a-competition"):
        read(jsonl_upload(tmp_path, lines, {}))


def test_jsonl_that_indexes_its_run_groups_is_not_a_mix(tmp_path):
    files = build.run_group_files("rg", [A, B], prefix="runs/", without_submission=[B])
    lines = [
        {"competition_id": A, "submission_path": next(k for k in files if k.endswith(".csv"))},
        {"competition_id": B, "submission_path": None},
    ]
    root = tree(tmp_path, {**files, "submission.jsonl": build.submissions_jsonl(lines)})
    contents = read(root)
    assert contents.kind == "run_groups"
    assert any("submission.jsonl only indexes the run folders" in w for w in contents.warnings)


# --- grading reports -----------------------------------------------------------------------


def report_file(ids, seed=None) -> bytes:
    return build.grading_report_bytes([build.competition_report_dict(c, seed=seed) for c in ids])


def test_reports_seeded_by_file_name_order(tmp_path):
    root = tree(
        tmp_path,
        {
            "b_grading_report.json": report_file([A, B]),
            "a_grading_report.json": report_file([A, B]),
            "notes.json": b'{"not": "a report"}',
        },
    )
    contents = read(root)
    assert contents.kind == "reports"
    assert contents.runs == ()
    got = [(g.run_group, g.seed, [r.competition_id for r in g.reports]) for g in contents.reported]
    assert got == [("a_grading_report", 0, [A, B]), ("b_grading_report", 1, [A, B])]
    assert all(r.seed == g.seed for g in contents.reported for r in g.reports)
    assert contents.reported[0].reports[0].score == 0.5


def test_report_seeds_from_the_reports_then_the_given_seeds(tmp_path):
    root = tree(
        tmp_path,
        {
            "r1.json": report_file([A], seed=0),  # the reports say
            "r2.json": report_file([A]),  # the uploader says
            "r3.json": report_file([A]),  # neither: next unused seed
            "r4.json": build.grading_report_bytes(
                [build.competition_report_dict(A, seed=s) for s in (5, 6)]
            ),
        },
    )
    contents = read(root, seeds={"r2": 2})
    got = sorted((g.run_group, g.seed) for g in contents.reported)
    assert got == [("r1", 0), ("r2", 2), ("r3", 1), ("r4", 5), ("r4", 6)]


def test_one_report_file_with_several_seeds_of_a_competition(tmp_path):
    root = tree(tmp_path, {"all.json": report_file([A, B, A, B])})
    contents = read(root)
    assert [(g.seed, len(g.reports)) for g in contents.reported] == [(0, 2), (1, 2)]
    assert any("assigned by position" in w for w in contents.warnings)


def test_report_with_unknown_competition(tmp_path):
    root = tree(tmp_path, {"r.json": report_file([A, "unheard-of"])})
    with pytest.raises(UploadLayoutError, match="unheard-of"):
        read(root)


def test_malformed_report_is_named(tmp_path):
    data = json.loads(report_file([A]))
    del data["competition_reports"][0]["score"]
    root = tree(tmp_path, {"r.json": json.dumps(data).encode()})
    with pytest.raises(UploadLayoutError, match=r"r.json.*lacks score"):
        read(root)


# --- whole-upload refusals -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "fragments"),
    [
        (
            {**build.run_group_files("rg", [A]), "report.json": report_file([A])},
            ("run-group folders (rg)", "grading-report JSON files (report.json)"),
        ),
        (
            {
                "submissions.jsonl": build.submissions_jsonl(
                    [{"competition_id": A, "submission_path": "a.csv"}]
                ),
                "report.json": report_file([A]),
            },
            ("submissions JSONL files (submissions.jsonl)", "grading-report JSON files"),
        ),
        (
            {
                **build.run_group_files("rg", [A]),
                "extra.jsonl": build.submissions_jsonl(
                    [{"competition_id": B, "submission_path": "b.csv"}]
                ),
                "b.csv": b"x",
            },
            ("run-group folders (rg)", "submissions JSONL files (extra.jsonl)"),
        ),
    ],
    ids=["run-groups+reports", "jsonl+reports", "run-groups+foreign-jsonl"],
)
def test_a_mix_of_layouts_is_refused(tmp_path, files, fragments):
    with pytest.raises(UploadLayoutError, match="mixes layouts") as refused:
        read(tree(tmp_path, files))
    for fragment in fragments:
        assert fragment in str(refused.value)


def test_nothing_recognisable(tmp_path):
    root = tree(tmp_path, {"a/readme.md": b"hi", "b.csv": b"x,y\n", "c.json": b"{}"})
    with pytest.raises(UploadLayoutError) as refused:
        read(root)
    message = str(refused.value)
    for layout in ("run-group folders", "submissions.jsonl", "grading-report JSON"):
        assert layout in message


def test_json_files_inside_run_folders_are_not_taken_for_reports(tmp_path):
    files = build.run_group_files("rg", [A])
    log = next(k for k in files if k.endswith("run.log"))
    files[log.replace("run.log", "report.json")] = report_file([A])
    files[log.replace("run.log", "events.jsonl")] = build.submissions_jsonl(
        [{"competition_id": A, "submission_path": "x.csv"}]
    )
    assert read(tree(tmp_path, files)).kind == "run_groups"


def test_windows_paths_in_jsonl_are_matched_by_suffix(tmp_path):
    lines = [{"competition_id": A, "submission_path": "C:\\runs\\rg\\a\\submission.csv"}]
    contents = read(jsonl_upload(tmp_path, lines, {"rg/a/submission.csv": b"a"}))
    assert contents.runs[0].submission_path == tmp_path / "rg/a/submission.csv"


@pytest.mark.parametrize("seed", [-1, "0", True, 1.5])
def test_given_seeds_must_be_whole_numbers(tmp_path, seed):
    with pytest.raises(UploadLayoutError, match="seed of run group rg must be a whole number"):
        read(tree(tmp_path, build.run_group_files("rg", [A])), seeds={"rg": seed})


def test_reports_in_folders_are_ordered_by_path(tmp_path):
    root = tree(tmp_path, {"z/r.json": report_file([A]), "a/r.json": report_file([A])})
    contents = read(root)
    assert [(g.run_group, g.seed) for g in contents.reported] == [("r", 0), ("r", 1)]


def test_run_groups_archive_builder_gives_one_run_per_competition_and_seed(tmp_path):
    data = build.run_groups_archive(
        [A, B], n_seeds=3, fmt="tgz", csv=lambda cid, seed: f"{cid},{seed}\n".encode()
    )
    root = tmp_path / "x"
    extract_archive(build.write_file(tmp_path / "u.tgz", data), root)
    runs = read(root).runs
    assert sorted((r.competition_id, r.seed) for r in runs) == sorted(
        (c, s) for c in (A, B) for s in range(3)
    )
    assert all(r.submission_path.read_text() == f"{r.competition_id},{r.seed}\n" for r in runs)


@pytest.mark.parametrize(
    ("metadata", "message"),
    [
        (
            b'{"run_group": "g", "runs": ["a", "b"]}',
            "'runs' is a JSON array, but must be an object",
        ),
        (b'{"run_group": "g"}', "it has no 'runs'"),
        (b'[{"run_id": "a"}]', "holds a JSON array, not an object"),
        (b'{"runs": {"a": 1}', "is not valid JSON"),
    ],
)
def test_malformed_metadata_json_is_named_with_what_is_wrong(tmp_path, metadata, message):
    files = build.run_group_files("2024-10-01_run-group_aide", [A, B])
    files["2024-10-01_run-group_aide/metadata.json"] = metadata
    with pytest.raises(UploadLayoutError) as caught:
        read(tree(tmp_path, files))
    text = str(caught.value)
    assert "2024-10-01_run-group_aide/metadata.json" in text and message in text
    assert "found nothing to grade" not in text


def test_run_folders_without_metadata_json_are_refused_naming_the_missing_file(tmp_path):
    files = build.run_group_files("2024-10-01_run-group_aide", [A, B])
    del files["2024-10-01_run-group_aide/metadata.json"]
    with pytest.raises(UploadLayoutError) as caught:
        read(tree(tmp_path, files))
    text = str(caught.value)
    assert text.startswith("metadata.json is missing: found 2 run folders")
    assert "Add 2024-10-01_run-group_aide/metadata.json" in text
    assert "found nothing to grade" not in text


def test_snapshots_are_read_by_either_name_and_in_order(tmp_path):
    """MLE-bench's ``snapshots/<seconds>/submission.csv`` and the harness's
    ``snapshots/submission_<seconds>s.csv``, whole seconds or with milliseconds (two
    snapshots in one second have names of their own)."""
    from benchmark.upload_layout.run_extras import run_snapshots
    from benchmark.upload_tree import UploadTree

    folder = tmp_path / "run" / "snapshots"
    (folder / "2.5").mkdir(parents=True)
    (folder / "2.5" / "submission.csv").write_text("a")
    for name in ("submission_00000001s.csv", "submission_00000001.500s.csv"):
        (folder / name).write_text("b")
    found = run_snapshots(UploadTree(tmp_path), "run", [])
    assert [elapsed for elapsed, _ in found] == [1.0, 1.5, 2.5]

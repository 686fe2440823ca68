"""Safe inspection and extraction of uploads: every refusal, and nothing left behind."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from benchmark.archive import (
    DEFAULT_LIMITS,
    ArchiveLimits,
    ArchiveRefused,
    archive_kind,
    extract_archive,
    inspect_archive,
)
from tests.support import archive_builders as build

TINY = ArchiveLimits(max_members=10, max_total_bytes=10_000, max_file_bytes=4_000, max_ratio=200)
RUN = {
    "rg/metadata.json": b'{"runs": {}}',
    "rg/spaceship-titanic_1/submission/submission.csv": build.SUBMISSION_CSV,
    "rg/spaceship-titanic_1/logs/run.log": b"log\n",
}


def upload(tmp_path: Path, data: bytes, name: str = "upload.bin") -> Path:
    return build.write_file(tmp_path / "in" / name, data)


def assert_refused(
    tmp_path: Path, path: Path, reason: str, *fragments: str, limits=DEFAULT_LIMITS
) -> ArchiveRefused:
    """Refused by inspection and by extraction, naming what is wrong; nothing left at dest."""
    with pytest.raises(ArchiveRefused) as inspected:
        inspect_archive(path, limits)
    dest = tmp_path / "out" / "dest"
    with pytest.raises(ArchiveRefused) as extracted:
        extract_archive(path, dest, limits)
    for refusal in (inspected.value, extracted.value):
        assert refusal.reason == reason, str(refusal)
        for fragment in fragments:
            assert fragment in str(refusal), str(refusal)
    assert not dest.exists()
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
    return extracted.value


# --- kinds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (build.zip_bytes(RUN), "zip"),
        (build.tar_bytes(RUN), "tar"),
        (build.tar_bytes(RUN, "gz"), "tar"),
        (build.tar_bytes(RUN, "bz2"), "tar"),
        (build.tar_bytes(RUN, "xz"), "tar"),
        (build.grading_report_bytes([build.competition_report_dict("spaceship-titanic")]), "json"),
        (b'[{"competition_id": "x"}]', "json"),
        (build.submissions_jsonl([{"competition_id": "a", "submission_path": "a.csv"}]), "jsonl"),
        (
            b'# comment\n{"competition_id": "a", "submission_path": null}\n{"competition_id": "b"}\n',
            "jsonl",
        ),
        (b"\xef\xbb\xbfid,prediction\n1,0.5\n", "csv"),
    ],
)
def test_kind_is_told_by_content_not_name(tmp_path, data, kind):
    assert archive_kind(upload(tmp_path, data, "misleading.txt")) == kind


@pytest.mark.parametrize(
    ("data", "reason", "fragment"),
    [
        (b"", "empty", "empty"),
        (b"\x89PNG\r\n\x1a\n" + bytes(100), "not_archive", "not an archive"),
        (b"just some words\nwithout commas\n", "not_archive", "not an archive"),
        (build.compress(b"id,x\n1,2\n" * 100, "gz"), "not_archive", "holds no tar archive"),
        (b"\x1f\x8b\x08\x00garbage", "corrupt", "corrupt or truncated gz"),
    ],
)
def test_not_an_archive(tmp_path, data, reason, fragment):
    path = upload(tmp_path, data)
    refusal = assert_refused(tmp_path, path, reason, fragment)
    with pytest.raises(ArchiveRefused):
        archive_kind(path)
    assert refusal.reason == reason


# --- valid uploads -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [build.zip_bytes(RUN)] + [build.tar_bytes(RUN, c) for c in ("", "gz", "bz2", "xz")],
    ids=["zip", "tar", "tgz", "tbz2", "txz"],
)
def test_extracts_every_format(tmp_path, data):
    dest = tmp_path / "out" / "dest"
    written = extract_archive(upload(tmp_path, data), dest, ArchiveLimits())
    assert [p.relative_to(dest).as_posix() for p in written] == list(RUN)
    for name, content in RUN.items():
        file = dest / name
        assert file.read_bytes() == content
        assert stat.S_IMODE(file.stat().st_mode) == 0o644
    for folder in [dest, *(p for p in dest.rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["dest"]  # no staging left


def test_listing_reports_members_without_writing(tmp_path):
    files = {"top/": b"", **RUN, "__MACOSX/rg/._x": b"junk", "rg/.DS_Store": b"junk"}
    path = upload(tmp_path, build.zip_bytes(files))
    listing = inspect_archive(path, ArchiveLimits())
    assert listing.kind == "zip"
    assert [m.name for m in listing.files] == list(RUN)
    assert listing.total_bytes == sum(len(v) for v in RUN.values())
    assert listing.ignored == ("__MACOSX/rg/._x", "rg/.DS_Store")
    assert all(m.compressed_size is not None for m in listing.files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


def test_macos_junk_is_skipped_not_refused(tmp_path):
    files = {**RUN, "__MACOSX/rg/._metadata.json": b"\x00\x05", "rg/.DS_Store": b"\x00"}
    dest = tmp_path / "dest"
    extract_archive(upload(tmp_path, build.tar_bytes(files, "gz")), dest, ArchiveLimits())
    assert not (dest / "__MACOSX").exists()
    assert not (dest / "rg" / ".DS_Store").exists()
    assert (dest / "rg" / "metadata.json").is_file()


def test_dot_components_are_normalised(tmp_path):
    files = {"./rg/./a.csv": b"a,b\n", "./": b""}
    listing = inspect_archive(upload(tmp_path, build.tar_bytes(files)), ArchiveLimits())
    assert [m.name for m in listing.members] == ["rg/a.csv"]


@pytest.mark.parametrize(
    ("data", "kind", "filename"),
    [
        (
            build.submissions_jsonl([{"competition_id": "a", "submission_path": "a.csv"}]),
            "jsonl",
            "runs.jsonl",
        ),
        (build.grading_report_bytes([build.competition_report_dict("a")]), "json", "report.json"),
        (b"id,prediction\n1,0\n", "csv", "spaceship.csv"),
    ],
)
def test_single_file_is_copied(tmp_path, data, kind, filename):
    path = upload(tmp_path, data, "stored-without-suffix")
    dest = tmp_path / "dest"
    assert extract_archive(path, dest, ArchiveLimits(), filename=filename) == [dest / filename]
    assert (dest / filename).read_bytes() == data
    assert extract_archive(path, tmp_path / "d2", ArchiveLimits()) == [
        tmp_path / "d2" / f"stored-without-suffix.{kind}"
    ]


def test_dest_must_be_new(tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(FileExistsError):
        extract_archive(upload(tmp_path, build.zip_bytes(RUN)), dest, ArchiveLimits())


# --- unsafe names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("../evil.csv", "climbs out"),
        ("rg/../../evil.csv", "climbs out"),
        ("/etc/cron.d/evil", "absolute path"),
        ("..\\evil.csv", "Windows path"),
        ("C:/Windows/evil.csv", "Windows path"),
        ("rg/" + "n" * 256 + ".csv", "too long"),
        ("/".join(["d" * 200] * 6), "too long"),
    ],
)
@pytest.mark.parametrize("fmt", ["zip", "tar"])
def test_paths_that_escape_are_refused(tmp_path, name, fragment, fmt):
    data = build.zip_with_member(name) if fmt == "zip" else build.tar_with_member(name)
    assert_refused(tmp_path, upload(tmp_path, data), "unsafe_path", fragment, repr(name)[:40])
    assert not (tmp_path / "out" / "evil.csv").exists()
    assert not (tmp_path / "evil.csv").exists()


# --- links and special files ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason", "fragments"),
    [
        (build.tar_symlink(), "link", ("'link.csv'", "symbolic link", "/etc/passwd")),
        (build.zip_symlink(), "link", ("'link.csv'", "symbolic link")),
        (build.tar_hardlink(), "link", ("'link.csv'", "hard link")),
        (build.tar_device(), "special_file", ("'dev/sda'", "character device")),
        (build.tar_device(block=True), "special_file", ("'dev/sda'", "block device")),
        (build.tar_fifo(), "special_file", ("'pipe'", "named pipe")),
        (
            build.zip_with_member("pipe", unix_mode=stat.S_IFIFO | 0o644),
            "special_file",
            ("'pipe'",),
        ),
    ],
    ids=["tar-symlink", "zip-symlink", "tar-hardlink", "chardev", "blockdev", "fifo", "zip-fifo"],
)
def test_links_and_special_files_are_refused(tmp_path, data, reason, fragments):
    assert_refused(tmp_path, upload(tmp_path, data), reason, *fragments)


# --- counts and sizes ----------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["zip", "tgz"])
def test_too_many_members(tmp_path, fmt):
    files = {f"f{i:03d}.csv": b"a\n" for i in range(11)}
    data = build.zip_bytes(files) if fmt == "zip" else build.tar_bytes(files, "gz")
    assert_refused(tmp_path, upload(tmp_path, data), "too_many_members", "limit is 10", limits=TINY)


def test_member_count_is_read_before_the_zip_directory(tmp_path):
    path = upload(tmp_path, build.zip_many_members(25_000))
    assert_refused(tmp_path, path, "too_many_members", "25,000 members", "limit is 20,000")


@pytest.mark.parametrize("fmt", ["zip", "tar"])
def test_total_size(tmp_path, fmt):
    files = {
        f"part{i}.csv": bytes(range(256)) * 12 for i in range(4)
    }  # 4 x 3 KiB, incompressible-ish
    data = build.zip_bytes(files) if fmt == "zip" else build.tar_bytes(files)
    assert_refused(
        tmp_path, upload(tmp_path, data), "total_size", "'part3.csv'", "9.8 KiB", limits=TINY
    )


@pytest.mark.parametrize("fmt", ["zip", "tar", "csv"])
def test_a_csv_over_the_file_limit(tmp_path, fmt):
    csv = b"id,prediction\n" + b"".join(b"%d,0.%d\n" % (i, i) for i in range(500))
    assert len(csv) > TINY.max_file_bytes
    name = "rg/spaceship-titanic_1/submission/submission.csv"
    data = (
        {"zip": build.zip_bytes, "tar": build.tar_bytes}[fmt]({name: csv}) if fmt != "csv" else csv
    )
    expected = "'upload.csv' is 4.7 KiB;" if fmt == "csv" else f"{name!r} is 4.7 KiB uncompressed"
    assert_refused(
        tmp_path,
        upload(tmp_path, data),
        "file_size",
        expected,
        "limit for one file is 3.9 KiB",
        limits=TINY,
    )


def test_member_ratio_logic_with_a_small_bomb(tmp_path):
    path = build.write_zip_bomb(tmp_path / "in.zip", 4 * 1024**2)  # 4 MiB of zeros, ~4 KiB zipped
    assert_refused(tmp_path, path, "ratio", "'bomb.csv'", "compression bomb", "limit is 200x")
    relaxed = ArchiveLimits(max_ratio=10_000)
    assert [m.size for m in inspect_archive(path, relaxed).files] == [4 * 1024**2]


def test_realistic_zip_bomb_is_refused_without_expanding(tmp_path):
    path = build.write_zip_bomb(tmp_path / "bomb.zip", 200 * 1024**2)
    assert path.stat().st_size < 1024**2
    refusal = assert_refused(tmp_path, path, "ratio", "'bomb.csv'", "200 MiB", "limit is 200x")
    assert "expands" in str(refusal)


def test_tar_gz_bomb_is_refused_at_its_header(tmp_path):
    path = build.write_tar_gz_bomb(tmp_path / "bomb.tgz", 48 * 1024**2)
    assert_refused(tmp_path, path, "ratio", "'bomb.csv'", "compression bomb", "limit is 200x")


def test_overall_ratio_over_many_small_members(tmp_path):
    # No single member over 1 MiB, but the whole archive expands ~1000x.
    files = {f"part{i:02d}.csv": bytes(512 * 1024) for i in range(8)}
    path = upload(tmp_path, build.tar_bytes(files, "gz"))
    assert_refused(tmp_path, path, "ratio", "the archive expands more than 200x")


def test_oversized_pax_header_is_refused_before_it_is_read(tmp_path):
    path = upload(tmp_path, build.tar_long_pax_header())
    assert_refused(tmp_path, path, "corrupt", "metadata header")


# --- duplicates and emptiness --------------------------------------------------------------


def test_duplicate_member_names(tmp_path):
    data = build.tar_duplicate_names("rg/a.csv")
    assert_refused(tmp_path, upload(tmp_path, data), "duplicate", "'rg/a.csv' appears twice")


def test_duplicate_zip_entries(tmp_path):
    import warnings
    import zipfile

    path = tmp_path / "dup.zip"
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as archive:
        warnings.simplefilter("ignore")
        archive.writestr("rg/a.csv", b"1\n")
        archive.writestr("rg/a.csv", b"2\n")
    assert_refused(tmp_path, path, "duplicate", "'rg/a.csv' appears twice")


def test_a_file_that_is_also_a_folder(tmp_path):
    data = build.zip_bytes({"rg": b"file", "rg/a.csv": b"1\n"})
    assert_refused(
        tmp_path, upload(tmp_path, data), "duplicate", "'rg' is both a file and a folder"
    )


@pytest.mark.parametrize(
    "data",
    [
        build.zip_bytes({}),
        build.zip_bytes({"rg/": b"", "rg/sub/": b""}),
        build.zip_bytes({"__MACOSX/._a": b"x", ".DS_Store": b"x"}),
        build.tar_bytes({}),
        build.tar_bytes({"rg/": b""}, "gz"),
    ],
    ids=["empty-zip", "folders-only", "junk-only", "empty-tar", "empty-tgz"],
)
def test_an_archive_without_files(tmp_path, data):
    assert_refused(tmp_path, upload(tmp_path, data), "empty", "no files")


# --- corrupt and lying archives ------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        build.truncated(build.zip_bytes(RUN)),
        build.truncated(build.tar_bytes(RUN, "gz")),
        build.truncated(build.tar_bytes(RUN, "bz2")),
        build.truncated(build.tar_bytes(RUN, "xz")),
        build.truncated(build.tar_bytes(RUN), keep=0.15),
        build.tar_with_garbage_after_first_member(),
    ],
    ids=["zip", "tgz", "tbz2", "txz", "tar", "tar-garbage"],
)
def test_corrupt_or_truncated(tmp_path, data):
    assert_refused(tmp_path, upload(tmp_path, data), "corrupt", "corrupt")


def test_zip_data_damage_is_caught_on_extraction(tmp_path):
    data = bytearray(build.zip_bytes({"a.csv": bytes(range(256)) * 40, "b.csv": b"b\n"}))
    data[200:260] = bytes(60)  # inside a.csv's deflate stream; the directory is intact
    path = upload(tmp_path, bytes(data))
    assert [m.name for m in inspect_archive(path, ArchiveLimits()).files] == ["a.csv", "b.csv"]
    dest = tmp_path / "out" / "dest"
    with pytest.raises(ArchiveRefused, match="'a.csv' is corrupt") as refused:
        extract_archive(path, dest, ArchiveLimits())
    assert refused.value.reason == "corrupt"
    assert list((tmp_path / "out").iterdir()) == []


def test_declared_size_that_lies_is_caught_by_counting(tmp_path):
    path = upload(tmp_path, build.zip_lying_size(actual=b"0" * 4096, declared=10))
    assert inspect_archive(path, ArchiveLimits()).files[0].size == 10  # the lie passes inspection
    dest = tmp_path / "out" / "dest"
    with pytest.raises(ArchiveRefused, match="'lie.csv'") as refused:
        extract_archive(path, dest, ArchiveLimits())
    assert refused.value.reason == "corrupt"
    assert list((tmp_path / "out").iterdir()) == []


def test_encrypted_zip_member(tmp_path):
    path = upload(tmp_path, build.zip_encrypted_flag())
    assert_refused(tmp_path, path, "encrypted", "'secret.csv'", "without a password")


def test_refusal_late_in_extraction_leaves_nothing(tmp_path):
    # The first member is written before the second is found to be damaged.
    data = bytearray(build.zip_bytes({"a.csv": b"fine\n", "b.csv": bytes(range(256)) * 40}))
    start = data.index(b"b.csv") + 5 + 40
    data[start : start + 40] = bytes(40)
    dest = tmp_path / "out" / "dest"
    with pytest.raises(ArchiveRefused, match="'b.csv'"):
        extract_archive(upload(tmp_path, bytes(data)), dest, ArchiveLimits())
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("fmt", ["zip", "tgz"])
def test_a_disk_error_is_not_blamed_on_the_upload(tmp_path, monkeypatch, fmt):
    import benchmark.archive

    def disk_full(*_args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(benchmark.archive._StagingWriter, "_check", disk_full)
    data = build.zip_bytes(RUN) if fmt == "zip" else build.tar_bytes(RUN, "gz")
    dest = tmp_path / "out" / "dest"
    with pytest.raises(OSError, match="No space left") as raised:
        extract_archive(upload(tmp_path, data), dest)
    assert not isinstance(raised.value, ArchiveRefused)
    assert list((tmp_path / "out").iterdir()) == []

"""A full disk answers uploads with 507 and a message, never a 500, and leaves no partial
file: below ``MLEBOARD_MEDIA_MIN_FREE_BYTES`` free (the free space as ``disk_usage`` says)
uploads are refused before their body is read; a disk that fills while an upload is
written (a real 2 MiB tmpfs, when the tests may mount one) is answered the same way, the
spool file removed at once, and the next upload is served."""

import io
import os
import shutil
import subprocess
from collections import namedtuple

import pytest
from django.test import Client, RequestFactory

from tests.support import archive_builders as ab
from tests.support.services import missing
from tests.support.tus import METADATA, create, head, patch
from webapp.accounts.tokens import token_create
from webapp.competitions.services import catalogue_sync
from webapp.core.media_space import FULL_MESSAGE
from webapp.edge.media_space import MediaSpaceMiddleware
from webapp.results.models import PartialUpload, Upload

pytestmark = pytest.mark.django_db
MiB = 1024**2
Usage = namedtuple("Usage", "total used free")


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def api(alice):
    _row, token = token_create(alice, "tests")
    return Client(HTTP_AUTHORIZATION=f"Token {token}")


def free_space(monkeypatch, free: int) -> None:
    """The media folder's filesystem says it has ``free`` bytes free."""
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(100 * 1024**3, 0, free))


def small_archive() -> bytes:
    return ab.run_groups_archive(["spaceship-titanic"], n_seeds=1)


def post_upload(client, data: bytes):
    archive = io.BytesIO(data)
    archive.name = "runs.zip"
    return client.post(
        "/api/uploads/", {"archive": archive, "metadata": '{"scaffold": "s", "model": "m"}'}
    )


def spooled(settings) -> list[str]:
    return sorted(os.listdir(settings.FILE_UPLOAD_TEMP_DIR))


@pytest.fixture
def spool(media, settings):
    settings.FILE_UPLOAD_TEMP_DIR = str(media / "incoming")
    os.makedirs(settings.FILE_UPLOAD_TEMP_DIR)
    return settings


def test_below_the_margin_an_upload_is_refused_with_507(api, spool, monkeypatch):
    spool.MLEBOARD_MEDIA_MIN_FREE_BYTES = 100 * MiB
    free_space(monkeypatch, 50 * MiB)
    response = post_upload(api, small_archive())
    assert response.status_code == 507
    assert response.json() == {"error": FULL_MESSAGE}
    assert not Upload.objects.exists() and spooled(spool) == []


def test_an_upload_that_would_cross_the_margin_is_refused(api, spool, monkeypatch):
    data = small_archive()
    spool.MLEBOARD_MEDIA_MIN_FREE_BYTES = 10 * MiB
    free_space(monkeypatch, 10 * MiB + len(data) // 2)
    assert post_upload(api, data).status_code == 507
    free_space(monkeypatch, 10 * MiB + 2 * len(data) + 4096)
    assert post_upload(api, data).status_code == 202


def test_the_upload_page_says_so_too(alice, spool, monkeypatch):
    spool.MLEBOARD_MEDIA_MIN_FREE_BYTES = 100 * MiB
    free_space(monkeypatch, MiB)
    client = Client()
    client.force_login(alice)
    archive = io.BytesIO(small_archive())
    archive.name = "runs.zip"
    response = client.post("/uploads/new/", {"archive": archive, "scaffold": "s", "model": "m"})
    assert response.status_code == 507
    assert b'id="no-room"' in response.content and b"nothing was kept" in response.content


def test_the_refusal_comes_before_any_byte_is_read(spool, monkeypatch):
    spool.MLEBOARD_MEDIA_MIN_FREE_BYTES = 100 * MiB
    free_space(monkeypatch, MiB)

    class Unreadable(io.RawIOBase):
        def read(self, *args):
            raise AssertionError("the body was read")

        readinto = read

    request = RequestFactory().post(
        "/api/uploads/", data=b"x" * 1000, content_type="multipart/form-data; boundary=b"
    )
    request.META["wsgi.input"] = Unreadable()
    request._stream = Unreadable()
    response = MediaSpaceMiddleware(lambda r: pytest.fail("the view ran"))(request)
    assert response.status_code == 507


def test_resumable_uploads_are_refused_below_the_margin(api, spool, monkeypatch):
    data = small_archive()
    created = create(api, len(data))
    assert created.status_code == 201
    url = created["Location"]
    spool.MLEBOARD_MEDIA_MIN_FREE_BYTES = 100 * MiB
    free_space(monkeypatch, MiB)
    refused = create(api, len(data))
    assert refused.status_code == 507 and refused.json()["error"] == FULL_MESSAGE
    assert refused["Tus-Resumable"] == "1.0.0"
    piece = patch(api, url, 0, data)
    assert piece.status_code == 507
    assert head(api, url)["Upload-Offset"] == "0"
    assert PartialUpload.objects.count() == 1


# --- a real full disk --------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path, settings):
    """MEDIA_ROOT on a 2 MiB tmpfs (mounting needs root: elsewhere the test is skipped, or
    fails where every service is required)."""
    if os.geteuid() != 0:
        missing("mounting a tmpfs needs root")
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        missing(f"a tmpfs cannot be mounted here: {done.stderr.decode().strip()}")
    settings.MEDIA_ROOT = mount
    settings.FILE_UPLOAD_TEMP_DIR = str(mount / "incoming")
    os.makedirs(settings.FILE_UPLOAD_TEMP_DIR)
    # Spooled to disk whatever the size, as a large upload is.
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0
    # No margin: what is tested is the write that meets the full disk.
    settings.MLEBOARD_MEDIA_MIN_FREE_BYTES = 0
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def used(mount) -> int:
    usage = shutil.disk_usage(mount)
    return usage.total - usage.free


def test_a_disk_that_fills_mid_upload_answers_507_and_keeps_nothing(api, tiny_disk, monkeypatch):
    real = shutil.disk_usage
    # The free space read before the upload is stale (another writer fills the disk
    # meanwhile): the check lets it through, and the write meets the full disk.
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 * 1024**3, 0, 10 * 1024**3))
    big = os.urandom(3 * MiB)  # does not compress: the archive is larger than the disk
    response = post_upload(api, ab.zip_bytes({"g/a/submission/submission.csv": big}))
    assert response.status_code == 507, response.content
    assert response.json() == {"error": FULL_MESSAGE}
    assert os.listdir(tiny_disk / "incoming") == []  # the partial spool file is gone at once
    monkeypatch.setattr(shutil, "disk_usage", real)
    assert used(tiny_disk) < 256 * 1024
    # The next upload is served, not a 500.
    assert post_upload(api, small_archive()).status_code == 202


def test_a_disk_that_fills_while_the_archive_is_stored_keeps_nothing_either(
    api, tiny_disk, monkeypatch
):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 * 1024**3, 0, 10 * 1024**3))
    # The request's spool file fits; the copy the view makes while hashing it does not.
    data = ab.zip_bytes({"g/a/submission/submission.csv": os.urandom(1200 * 1024)})
    response = post_upload(api, data)
    assert response.status_code == 507, response.content
    assert not Upload.objects.exists()
    leftovers = [p for p in tiny_disk.rglob("*") if p.is_file()]
    assert leftovers == []


def test_a_resumable_piece_that_meets_a_full_disk_keeps_what_fit(api, tiny_disk, monkeypatch):
    monkeypatch.setattr(shutil, "disk_usage", lambda path: Usage(10 * 1024**3, 0, 10 * 1024**3))
    data = os.urandom(3 * MiB)
    created = create(api, len(data), metadata=METADATA)
    url = created["Location"]
    piece = patch(api, url, 0, data)
    assert piece.status_code == 507 and piece.json()["error"] == FULL_MESSAGE
    offset = int(head(api, url)["Upload-Offset"])
    assert 0 < offset < len(data)
    partial = PartialUpload.objects.get()
    part = tiny_disk / "partial" / f"{partial.key}.part"
    # What did not fit is cut off: the file holds exactly the bytes counted.
    assert part.stat().st_size == offset and part.read_bytes() == data[:offset]


def test_a_disk_that_fills_while_an_upload_is_read_is_said_so():
    """Two uploads accepted at once near the margin can meet a full disk while unpacking:
    the upload fails saying so (and what to do), not as an internal error."""
    import errno

    from webapp.results.tasks import _internal_error

    message = _internal_error("reading the upload", OSError(errno.ENOSPC, "No space left"))
    assert "storage filled up" in message and "send it again later" in message
    assert "internal error" not in message
    assert "internal error" in _internal_error("reading the upload", OSError(errno.EIO, "I/O"))

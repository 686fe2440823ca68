"""Resumable uploads (tus 1.0) through the Django test client: pieces, a piece cut off, the
offset to continue from, assembly into the same upload path as a one-request upload
(checksum, dedup, safety checks), refusals with reasons, expiry by the sweeper, quotas."""

import datetime as dt
import hashlib
import json
import socket

import pytest
from django.test import Client
from django.utils import timezone

from tests.support import archive_builders as ab
from tests.support.tus import METADATA, TUS, b64, create, head, patch
from webapp.accounts.tokens import token_create
from webapp.competitions.services import catalogue_sync
from webapp.results.models import PartialUpload, Upload
from webapp.results.uploads import resumable
from webapp.results.uploads.resumable import partial_uploads_sweep
from webapp.results.uploads.sha256 import ResumableSha256

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def api(alice):
    _row, token = token_create(alice, "tests")
    return Client(HTTP_AUTHORIZATION=f"Token {token}")


def archive() -> bytes:
    return ab.run_groups_archive(["spaceship-titanic", "aerial-cactus-identification"], n_seeds=2)


def test_an_archive_in_pieces_becomes_one_upload_with_its_checksum(api, media):
    data = archive()
    created = create(api, len(data))
    assert created.status_code == 201, created.content
    url = created["Location"]
    assert created["Tus-Resumable"] == "1.0.0" and created["Upload-Expires"]
    offset = 0
    for size in (1000, 1, 5000, len(data)):
        piece = data[offset : offset + size]
        if not piece:
            break
        response = patch(api, url, offset, piece)
        assert response.status_code == 204, response.content
        offset = int(response["Upload-Offset"])
    assert offset == len(data)
    upload = Upload.objects.get()
    assert upload.sha256 == hashlib.sha256(data).hexdigest() and upload.size == len(data)
    assert upload.metadata["scaffold"] == "aide" and upload.original_name == "runs.zip"
    assert response["Mleboard-Upload"] == f"/api/uploads/{upload.pk}/"
    assert head(api, url)["Mleboard-Upload-Page"] == f"/uploads/{upload.pk}/"
    assert PartialUpload.objects.get().state == "complete"
    assert not list((media / "partial").iterdir())  # the part became the stored archive
    assert open(upload.archive.path, "rb").read() == data


def test_a_piece_cut_off_keeps_what_arrived_and_the_upload_continues_from_there(api, media):
    data = archive()
    url = create(api, len(data))["Location"]
    # The body says 4000 bytes, but the connection ends after 1234 of them.
    partial = PartialUpload.objects.get()
    chunks = iter([data[:1000], data[1000:1234], b""])
    received = resumable.partial_receive(partial, 0, lambda n: next(chunks), 4000)
    assert received.partial.offset == 1234
    assert head(api, url)["Upload-Offset"] == "1234"
    assert patch(api, url, 0, data[:10]).status_code == 409  # not where it stands
    assert patch(api, url, 1234, data[1234:]).status_code == 204
    assert Upload.objects.get().sha256 == hashlib.sha256(data).hexdigest()


def test_a_read_error_mid_piece_keeps_what_arrived(api, media):
    data = archive()
    create(api, len(data))
    partial = PartialUpload.objects.get()

    pieces = iter([data[:700]])

    def read(n):
        for piece in pieces:
            return piece
        raise OSError("connection reset by peer")

    assert resumable.partial_receive(partial, 0, read, None).partial.offset == 700


def test_a_resent_archive_is_the_earlier_upload(api, media):
    data = archive()
    for _ in range(2):
        url = create(api, len(data))["Location"]
        response = patch(api, url, 0, data)
        assert response.status_code == 204
    assert Upload.objects.count() == 1
    assert {p.upload_id for p in PartialUpload.objects.all()} == {Upload.objects.get().pk}


def test_a_hostile_archive_is_refused_after_assembly_and_only_the_original_is_kept(api, media):
    data = ab.zip_with_member("../../escape.csv")
    url = create(api, len(data))["Location"]
    response = patch(api, url, 0, data)
    assert response.status_code == 204
    upload = Upload.objects.get()
    assert upload.status == "failed" and "escape" in upload.error
    assert PartialUpload.objects.get().error == upload.error
    progress = api.get(response["Mleboard-Upload"]).json()
    assert progress["status"] == "failed"


@pytest.mark.parametrize(
    ("headers", "status", "words"),
    [
        ({"HTTP_UPLOAD_LENGTH": "abc"}, 400, "whole number"),
        ({"HTTP_UPLOAD_LENGTH": "-5"}, 400, "whole number"),
        ({"HTTP_UPLOAD_LENGTH": "9" * 40}, 400, "whole number"),
        ({"HTTP_UPLOAD_LENGTH": "0"}, 400, "empty"),
        ({"HTTP_UPLOAD_METADATA": "metadata %%%"}, 400, "base64"),
        ({"HTTP_UPLOAD_METADATA": f"metadata {b64('{nope')}"}, 400, "not valid JSON"),
        ({"HTTP_UPLOAD_METADATA": f"metadata {b64(json.dumps({'model': 'm'}))}"}, 400, "scaffold"),
        ({"HTTP_UPLOAD_METADATA": f"metadata {b64('[' * 5000 + ']' * 5000)}"}, 400, "nested"),
        ({"HTTP_TUS_RESUMABLE": "0.2.2"}, 412, "Tus-Resumable"),
        ({"HTTP_UPLOAD_DEFER_LENGTH": "1"}, 400, "Defer"),
    ],
)
def test_creation_refusals_say_what_to_do(api, media, headers, status, words):
    base = {
        **TUS,
        "HTTP_UPLOAD_LENGTH": "100",
        "HTTP_UPLOAD_METADATA": f"metadata {b64(json.dumps(METADATA))}",
    }
    response = api.post("/api/uploads/tus/", **{**base, **headers})
    assert response.status_code == status, response.content
    assert words in response.json()["error"]
    assert PartialUpload.objects.count() == 0


def test_too_large_is_413_before_any_byte(api, media, settings):
    settings.UPLOAD_MAX_BYTES = 1000
    response = create(api, 1001)
    assert response.status_code == 413
    assert (
        "1,000" in response.json()["error"]
        and "MLEBOARD_UPLOAD_MAX_BYTES" in response.json()["error"]
    )


def test_patch_refusals(api, media):
    data = archive()
    url = create(api, len(data))["Location"]
    wrong_type = api.generic(
        "PATCH", url, data, content_type="application/zip", **TUS, HTTP_UPLOAD_OFFSET="0"
    )
    assert wrong_type.status_code == 415
    assert patch(api, url, 0, data + b"extra").status_code == 413
    assert patch(api, url, 5, data).status_code == 409
    no_offset = api.generic(
        "PATCH", url, data, content_type="application/offset+octet-stream", **TUS
    )
    assert no_offset.status_code == 400 and "Upload-Offset" in no_offset.json()["error"]
    assert PartialUpload.objects.get().offset == 0


@pytest.mark.parametrize("digits", ["²", "١٢", "１０", "1²"])
def test_digits_int_refuses_are_a_400_not_a_500(api, media, digits):
    meta = f"filename {b64('runs.zip')},metadata {b64(json.dumps(METADATA))}"
    created = api.post(
        "/api/uploads/tus/", **TUS, HTTP_UPLOAD_LENGTH=digits, HTTP_UPLOAD_METADATA=meta
    )
    assert created.status_code == 400 and "Upload-Length" in created.json()["error"]
    url = create(api, 100)["Location"]
    patched = api.generic(
        "PATCH",
        url,
        b"x" * 10,
        content_type="application/offset+octet-stream",
        **TUS,
        HTTP_UPLOAD_OFFSET=digits,
    )
    assert patched.status_code == 400 and "Upload-Offset" in patched.json()["error"]
    assert PartialUpload.objects.get().offset == 0


def test_a_chunked_piece_is_refused_not_dropped(api, media):
    """Django reads a body up to its Content-Length: a chunked one (none) read as empty and
    answered 204 with nothing stored. Refused with what to do instead."""
    url = create(api, 100)["Location"]
    response = patch(api, url, 0, b"", HTTP_TRANSFER_ENCODING="chunked")
    assert response.status_code == 400
    assert "Content-Length" in response.json()["error"]
    assert response["Tus-Resumable"] == "1.0.0"
    assert PartialUpload.objects.get().offset == 0


@pytest.mark.django_db(transaction=True)
def test_a_chunked_piece_over_the_wire_is_refused(alice, media, live_server):
    """The same through a real server and socket: the body arrives in chunks."""
    _row, token = token_create(alice, "tests")
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    url = create(api, 100)["Location"]
    host, port = live_server.thread.host, live_server.thread.port
    with socket.create_connection((host, port), timeout=30) as conn:
        conn.sendall(
            (
                f"PATCH {url} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {token}\r\n"
                "Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n"
                "Content-Type: application/offset+octet-stream\r\n"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                "a\r\n0123456789\r\n0\r\n\r\n"
            ).encode()
        )
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"Content-Length" in answer
    assert PartialUpload.objects.get().offset == 0


def test_nobody_else_sees_or_touches_an_upload(api, bob, media):
    data = archive()
    url = create(api, len(data))["Location"]
    _row, token = token_create(bob, "bob")
    other = Client(HTTP_AUTHORIZATION=f"Token {token}")
    assert head(other, url).status_code == 404
    assert patch(other, url, 0, data).status_code == 404
    assert other.delete(url, **TUS).status_code == 404
    assert other.get("/api/uploads/tus/").json() == {"uploads": []}
    assert Client().post("/api/uploads/tus/", **TUS, HTTP_UPLOAD_LENGTH="5").status_code in (
        401,
        403,
    )
    assert Client().options("/api/uploads/tus/")["Tus-Version"] == "1.0.0"


def test_termination_removes_the_part(api, media):
    data = archive()
    url = create(api, len(data))["Location"]
    patch(api, url, 0, data[:100])
    assert api.delete(url, **TUS).status_code == 204
    assert head(api, url).status_code == 410
    assert patch(api, url, 100, data[100:]).status_code == 410
    assert not list((media / "partial").iterdir())


def test_the_sweeper_expires_silent_uploads_and_removes_their_part(api, media, settings):
    data = archive()
    url = create(api, len(data))["Location"]
    patch(api, url, 0, data[:100])
    assert partial_uploads_sweep().expired == 0
    PartialUpload.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    assert partial_uploads_sweep().expired == 1
    assert PartialUpload.objects.get().state == "expired"
    assert head(api, url).status_code == 410
    assert not list((media / "partial").iterdir())


def test_the_sweeper_assembles_again_an_upload_whose_assembly_died(api, media):
    data = archive()
    url = create(api, len(data))["Location"]
    partial = PartialUpload.objects.get()
    # Every byte arrived and assembly began an hour ago, then its process died.
    assert resumable.partial_move(partial.pk, "assembling", expected="receiving")
    hasher = ResumableSha256()
    hasher.update(data)
    (media / "partial" / f"{partial.key}.part").write_bytes(data)
    PartialUpload.objects.filter(pk=partial.pk).update(
        offset=len(data),
        sha256_state=hasher.state(),
        updated_at=timezone.now() - dt.timedelta(hours=1),
    )
    assert partial_uploads_sweep().assembled == 1
    assert head(api, url)["Mleboard-Upload"] == f"/api/uploads/{Upload.objects.get().pk}/"


def test_daily_quotas_count_completed_uploads_and_bytes(api, media, settings):
    settings.UPLOADS_PER_DAY = 1
    data = archive()
    url = create(api, len(data))["Location"]
    patch(api, url, 0, data)
    refused = create(api, 10)
    assert refused.status_code == 429 and "MLEBOARD_UPLOADS_PER_DAY" in refused.json()["error"]
    assert int(refused["Retry-After"]) > 3600
    settings.UPLOADS_PER_DAY = 50
    settings.UPLOAD_BYTES_PER_DAY = len(data) + 500
    assert create(api, 400).status_code == 201  # held for the upload still arriving
    refused = create(api, 200)
    assert refused.status_code == 429 and "MLEBOARD_UPLOAD_BYTES_PER_DAY" in refused.json()["error"]


def test_the_hash_state_survives_a_round_trip_through_the_database(tmp_path):
    data = bytes(range(256)) * 5000
    hasher = ResumableSha256()
    hasher.update(data[:77_777])
    again = ResumableSha256.resume(hasher.state(), tmp_path / "unused")
    again.update(data[77_777:])
    assert again.hexdigest() == hashlib.sha256(data).hexdigest()
    # The fallback (no libcrypto): the count, and the part file re-read.
    part = tmp_path / "part"
    part.write_bytes(data[:1000])
    fallback = ResumableSha256.resume(b"N" + (1000).to_bytes(8, "big"), part)
    fallback.update(data[1000:])
    assert fallback.hexdigest() == hashlib.sha256(data).hexdigest()

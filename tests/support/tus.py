"""Requests of the resumable upload protocol (tus 1.0) through Django's test client."""

import base64
import json

METADATA = {"scaffold": "aide", "model": "gpt-4o"}


def create(api, length: int, metadata=METADATA, filename="runs.zip", **headers):
    meta = f"filename {b64(filename)},metadata {b64(json.dumps(metadata))}"
    return api.post(
        "/api/uploads/tus/",
        **TUS,
        HTTP_UPLOAD_LENGTH=str(length),
        HTTP_UPLOAD_METADATA=meta,
        **headers,
    )


def patch(api, url: str, offset: int, data: bytes, **headers):
    return api.generic(
        "PATCH",
        url,
        data,
        content_type="application/offset+octet-stream",
        **TUS,
        HTTP_UPLOAD_OFFSET=str(offset),
        **headers,
    )


def head(api, url: str):
    return api.head(url, **TUS)


TUS = {"HTTP_TUS_RESUMABLE": "1.0.0"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()

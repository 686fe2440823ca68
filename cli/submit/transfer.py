"""Sending a submission to a site: the payload (a tar made on the fly, or a ready archive)
and its tus 1.0 upload in pieces, continued from the site's offset after an interruption,
with tuspy's retries; the progress shown while it goes."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from cli.submit.state import load_state, save_state, state_file

FORMAT_VERSION = "mleboard-submit-tar-1"


class Usage(Exception):
    """A usage problem the message explains (exit code 2)."""


class Refused(Exception):
    """The site, or the check here, refuses the submission (exit code 1)."""


class Interrupted(Exception):
    """The connection dropped or Ctrl-C: running the same command continues (exit code 3)."""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def human_size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


class Payload:
    """What will be sent: a tar of members made on the fly, or a ready archive."""

    def __init__(self, paths: list[Path], metadata: dict):
        from cli.archive_stream import TarStream, collect, is_ready_archive

        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise Usage(f"no such file or folder: {', '.join(missing)}")
        archives = [p for p in paths if is_ready_archive(p)]
        meta = json.dumps(metadata, sort_keys=True)
        if archives:
            if len(paths) > 1:
                raise Usage("send a ready archive on its own (one PATH), or folders without it")
            path = archives[0].resolve()
            st = path.stat()
            self.members = None
            self.name = path.name
            self.length = st.st_size
            self.open = lambda: open(path, "rb")  # noqa: SIM115
            self.fingerprint = hashlib.sha256(
                f"{FORMAT_VERSION}\0{path}\0{st.st_size}\0{st.st_mtime_ns}\0{meta}".encode()
            ).hexdigest()
            self.path = path
            return
        other = [str(p) for p in paths if p.is_file() and p.suffix != ".jsonl"]
        if other:
            raise Usage(
                f"{', '.join(other)}: give run-group folders, a submissions.jsonl, or a ready "
                "archive (.zip, .tar, .tar.gz, .tar.bz2, .tar.xz)"
            )
        self.members = collect(paths)
        first = paths[0].resolve()
        self.name = (first.stem if first.is_file() else first.name) + ".tar"
        self.length = TarStream(self.members).length
        self.open = lambda: TarStream(self.members)
        self.fingerprint = self.members.fingerprint(f"{FORMAT_VERSION}\0{meta}")
        self.path = None


def _tus_error(error) -> tuple[int | None, str]:
    from cli.site_api import error_text

    status = getattr(error, "status_code", None)
    body = getattr(error, "response_content", None) or b""
    try:
        text = json.loads(body).get("error", "") if body else ""
    except (ValueError, AttributeError):
        text = body.decode("utf-8", "replace")[:300] if isinstance(body, bytes) else str(body)
    if not text and hasattr(error, "response"):
        text = error_text(error.response)
    return status, text or str(error)


def send(client, payload: Payload, metadata: dict, args) -> str:
    """Send the payload (continuing an earlier attempt when there is one); returns the
    API address of the upload it became."""
    from tusclient.client import TusClient
    from tusclient.exceptions import TusCommunicationError, TusUploadFailed

    state_path = state_file(client.url, payload)
    state = load_state(state_path)
    if state.get("upload"):
        say("Already sent (an earlier run of this command); following it.")
        return state["upload"]
    tus = TusClient(
        client.absolute("/api/uploads/tus/"), headers={"Authorization": f"Token {client.token}"}
    )
    stream = payload.open()
    uploader = None
    try:
        uploader = _uploader(tus, stream, payload, metadata, args, state.get("url"))
        if state.get("url") != uploader.url:
            save_state(
                state_path, {"url": uploader.url, "site": client.url, "length": payload.length}
            )
        if uploader.offset:
            say(
                f"Continuing an interrupted upload at {human_size(uploader.offset)} of {human_size(payload.length)}."
            )
        headers = _send_pieces(uploader, payload, args, client)
    except KeyboardInterrupt:
        sent = uploader.offset if uploader is not None else 0
        raise Interrupted(_resume_hint(sent, payload.length)) from None
    except (TusCommunicationError, TusUploadFailed) as error:
        status, text = _tus_error(error)
        if status in (401, 403):
            from cli.site_api import refused_token_message

            raise Refused(refused_token_message(client.url)) from None
        if status is None:
            sent = uploader.offset if uploader is not None else 0
            if uploader is None:
                raise Refused(
                    f"could not reach {client.url}: {text}; check the address and try again"
                ) from None
            raise Interrupted(
                f"the connection to {client.url} dropped ({text}). {_resume_hint(sent, payload.length)}"
            ) from None
        raise Refused(f"the site answered {status}: {text}") from None
    finally:
        stream.close()
    upload = headers.get("mleboard-upload")
    if not upload:
        raise Refused(
            "the site took every byte but did not say which upload it became; is it an mleboard site?"
        )
    save_state(state_path, {**load_state(state_path), "upload": upload})
    return upload


def _resume_hint(sent: int, length: int) -> str:
    share = f" ({100 * sent / length:.0f}%)" if length else ""
    return f"{human_size(sent)} of {human_size(length)} sent{share}; run the same command again to continue from there."


def _uploader(tus, stream, payload, metadata, args, url):
    from tusclient.exceptions import TusCommunicationError
    from tusclient.uploader import Uploader

    options = dict(
        file_stream=stream,
        chunk_size=args.chunk_size * 1024 * 1024,
        metadata={"filename": payload.name, "metadata": json.dumps(metadata)},
        retries=args.retries,
        retry_delay=5,
    )
    if url:
        try:
            return Uploader(client=tus, url=url, **options)
        except TusCommunicationError as error:
            status, _text = _tus_error(error)
            if status is None:
                raise
            say("The earlier upload is gone from the site (expired or cancelled): starting again.")
    uploader = Uploader(client=tus, **options)
    uploader.set_url(uploader.create_url())
    uploader.offset = 0
    return uploader


def _send_pieces(uploader, payload, args, client) -> dict:
    """PATCH pieces until every byte is on the site; returns the last answer's headers."""
    from tusclient.exceptions import TusUploadFailed

    bar = _Progress(payload.length, uploader.offset)
    try:
        while uploader.offset < payload.length:
            try:
                uploader.upload_chunk()
            except TusUploadFailed as error:
                status, text = _tus_error(error)
                if status in (409, 423):  # not where we thought, or a cut-off piece still draining
                    uploader.offset = _wait_for_offset(uploader)
                    continue
                if status == 410:
                    raise Refused(f"{text}. Run the command again to start a new upload.") from None
                raise
            bar.update(uploader.offset)
    finally:
        bar.close()
    headers = (
        dict(getattr(uploader.request, "response_headers", {}) or {})
        if getattr(uploader, "request", None)
        else {}
    )
    if "mleboard-upload" not in headers:
        headers = _head(uploader)
    return headers


def _head(uploader, attempts: int = 60) -> dict:
    """The upload's headers, waiting while the site stores a complete one."""
    import requests

    for _ in range(attempts):
        response = requests.head(uploader.url, headers=uploader.get_headers(), timeout=30)
        headers = {k.lower(): v for k, v in response.headers.items()}
        if response.status_code >= 400 or "mleboard-upload" in headers:
            return headers
        if int(headers.get("upload-offset", -1)) < int(headers.get("upload-length", 0)):
            return headers
        time.sleep(1)
    return {}


def _wait_for_offset(uploader, seconds: float = 120) -> int:
    """The site's offset, once no other request is still writing the upload."""
    from tusclient.exceptions import TusCommunicationError

    deadline = time.monotonic() + seconds
    while True:
        try:
            return uploader.get_offset()
        except TusCommunicationError as error:
            status, _ = _tus_error(error)
            if status != 423 or time.monotonic() > deadline:
                raise
            time.sleep(1)


class _Progress:
    """Bytes sent, rate and time left: tqdm's bar on a terminal, a line every 10% else."""

    def __init__(self, total: int, initial: int):
        from tqdm import tqdm

        self.total = total
        self.last = initial
        self.started = time.monotonic()
        self.start_offset = initial
        self.next_line = (initial * 10 // max(total, 1) + 1) * total // 10
        self.bar = tqdm(
            total=total,
            initial=initial,
            unit="B",
            unit_scale=True,
            unit_divisor=1024,
            desc="Sending",
            file=sys.stderr,
            disable=None,
            dynamic_ncols=True,
        )
        self.tty = not self.bar.disable

    def update(self, offset: int) -> None:
        if self.tty:
            self.bar.update(offset - self.last)
        elif offset >= self.next_line or offset == self.total:
            elapsed = max(time.monotonic() - self.started, 1e-6)
            rate = (offset - self.start_offset) / elapsed
            left = (self.total - offset) / rate if rate else 0
            say(
                f"Sending: {100 * offset / self.total:3.0f}%  {human_size(offset)} of {human_size(self.total)}  {human_size(rate)}/s  {left:.0f} s left"
            )
            self.next_line = (offset * 10 // self.total + 1) * self.total // 10
        self.last = offset

    def close(self) -> None:
        self.bar.close()

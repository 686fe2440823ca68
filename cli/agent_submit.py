"""``mleboard agent submit PATH --site URL``: send an agent (a folder, packed here as a
tar.gz, or a ready zip/tar) to a site to be reviewed, built offline and reproduced. The
token is found as ``mleboard submit`` finds it. Exit codes: 0 received, 1 refused, 2
usage, 3 the site could not be reached."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tarfile
from pathlib import Path

import requests

from cli.site_api import (
    Site,
    SiteError,
    error_text,
    refused_token_message,
    resolve_site,
    resolve_token,
)

ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
SKIPPED = {"__pycache__", ".git", ".venv", ".mypy_cache", ".pytest_cache"}


def register(subparsers) -> None:
    agent = subparsers.add_parser(
        "agent", help="submitted agents: send one to a site to be reproduced"
    )
    commands = agent.add_subparsers(dest="agent_command", metavar="COMMAND")
    submit = commands.add_parser(
        "submit",
        help="send an agent folder (or its archive) to a site",
        description="Send an agent (agent.yaml, a Dockerfile FROM ${BASE_IMAGE}, its code "
        "and a hash-pinned requirements file) to an mleboard site. It is reviewed, built "
        "with no network and can then reproduce an experiment. Exit codes: 0 received, 1 "
        "refused, 2 usage, 3 the site could not be reached.",
    )
    submit.add_argument("path", type=Path, metavar="PATH", help="the agent's folder or archive")
    submit.add_argument("--site", help="the site's address (default: `mleboard login`'s)")
    submit.add_argument("--token", help="an API token (default: $MLEBOARD_TOKEN, else login's)")
    submit.add_argument(
        "--experiment", type=int, help="the id of the experiment it claims to reproduce"
    )
    submit.set_defaults(handler=cmd_agent_submit)
    agent.set_defaults(handler=lambda _args: (agent.print_help(sys.stderr), 2)[1])


def pack_folder(folder: Path) -> bytes:
    """The folder as a tar.gz: regular files and folders only (a link is left out, as the
    site would refuse it), caches skipped, names relative to the folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
            for name in sorted(files):
                path = Path(root) / name
                if path.is_symlink() or not path.is_file():
                    continue
                tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


def cmd_agent_submit(args: argparse.Namespace) -> int:
    path: Path = args.path
    if path.is_dir():
        if not (path / "agent.yaml").is_file():
            print(f"mleboard agent submit: {path} has no agent.yaml", file=sys.stderr)
            return 2
        payload, name = pack_folder(path), f"{path.resolve().name}.tar.gz"
    elif path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES):
        payload, name = path.read_bytes(), path.name
    else:
        print(
            f"mleboard agent submit: {path} is neither an agent folder nor a zip/tar archive",
            file=sys.stderr,
        )
        return 2
    try:
        url = resolve_site(args.site)
        token, _where = resolve_token(url, args.token)
        site = Site(url, token)
        data = {"experiment": str(args.experiment)} if args.experiment else {}
        try:
            response = site.session.post(
                site.absolute("/api/agents/"),
                files={"archive": (name, payload, "application/octet-stream")},
                data=data,
                timeout=(10, 300),
            )
        except requests.RequestException as error:
            print(
                f"mleboard agent submit: could not reach {url} ({error.__class__.__name__})",
                file=sys.stderr,
            )
            return 3
    except SiteError as error:
        print(f"mleboard agent submit: {error}", file=sys.stderr)
        return 3 if error.unreachable else 2
    if response.status_code == 401:
        print(f"mleboard agent submit: {refused_token_message(url)}", file=sys.stderr)
        return 1
    if response.status_code != 201:
        print(f"mleboard agent submit: refused: {error_text(response)}", file=sys.stderr)
        return 1
    body = response.json()
    print(
        f"received {body['name']} v{body['version']} (sha256 {body['sha256'][:12]}): "
        f"{body['status_label']}\n{body['url']}"
    )
    print(json.dumps({k: body[k] for k in ("id", "name", "version", "sha256", "status")}))
    return 0

"""MkDocs hook (``mkdocs.yml``: ``hooks``): the API reference, generated at every build.

The OpenAPI schema is made by the site's own code (``manage.py spectacular``, in a child
process so Django's settings stay out of MkDocs), so the reference never differs from the
API it documents. It becomes three files of the docs site, served with it and read offline:
``api/openapi.json``, ``api/redoc.standalone.js`` (the Redoc bundle drf-spectacular-sidecar
ships, as the site's ``/api/redoc/`` serves it) and ``api/reference.html``, a Redoc page
with the schema inlined (it works from ``file://`` too, where a browser refuses to fetch).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mleboard API reference</title>
<link rel="icon" href="data:,">
<style>body {{ margin: 0; }} #bar {{ font: 14px system-ui, sans-serif; padding: .5rem 1rem;
background: #1f2a37; color: #fff; }} #bar a {{ color: #cfe0ff; }}</style>
</head>
<body>
<nav id="bar"><a href="../api.html">&larr; mleboard documentation</a> &middot;
API reference (OpenAPI {version}) &middot; <a href="openapi.json">schema (JSON)</a> &middot;
<a href="/" id="back-to-site">the site</a></nav>
<div id="redoc-container"></div>
<script src="redoc.standalone.js"></script>
<script>
Redoc.init({schema}, {{}}, document.getElementById("redoc-container"));
</script>
</body>
</html>
"""


def openapi_schema() -> dict:
    """The API's schema as drf-spectacular makes it for the site."""
    env = dict(os.environ)
    # Making the schema signs nothing; the settings only insist on a key being set.
    env.setdefault("SECRET_KEY", "docs-build-schema-only")
    out = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--format", "openapi-json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"manage.py spectacular failed:\n{out.stderr}")
    return json.loads(out.stdout)


# Redoc's sidebar credit loads its logo from Redocly's CDN (a double-quoted string in the
# bundle): an empty image instead, so that the reference fetches nothing from another host.
REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E"


def redoc_bundle() -> str:
    import drf_spectacular_sidecar

    folder = Path(drf_spectacular_sidecar.__file__).parent
    bundle = (
        folder / "static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
    ).read_text(encoding="utf-8")
    return bundle.replace(REDOC_CDN_LOGO, EMPTY_SVG)


def on_files(files: Files, config) -> Files:
    schema = openapi_schema()
    as_json = json.dumps(schema, indent=2, sort_keys=False)
    # Inlined in a <script>: "</" would end it early.
    inline = json.dumps(schema).replace("</", "<\\/")
    page = PAGE.format(schema=inline, version=schema.get("openapi", "3"))
    for path, content in (
        ("api/openapi.json", as_json),
        ("api/redoc.standalone.js", redoc_bundle()),
        ("api/reference.html", page),
    ):
        files.append(File.generated(config, path, content=content))
    return files

"""``mleboard submit``: send MLE-bench runs to a site, resumably, and follow their grading;
``mleboard login``: keep a token for a site.

PATH is run-group folders, a ``submissions.jsonl`` (sent with the files it names) or a
ready archive. Folders go as a tar made on the fly (``cli.archive_stream``, nothing written
to disk) over tus 1.0 in pieces; the unfinished upload's address is kept in the user's
cache folder, so the same command continues it, and the site knows a resent archive by its
checksum (never a second experiment). Usage: docs/submit.md and ``mleboard submit -h``.

Exit codes: 0 graded; 1 refused or failed (the message says why and what to do); 2 usage;
3 interrupted - the connection dropped or Ctrl-C: run the same command again to continue.
"""

from __future__ import annotations

import argparse
import getpass
import json
import tempfile
import time
from pathlib import Path

from benchmark import disclosure
from cli.submit.transfer import (
    Interrupted,
    Payload,
    Refused,
    Usage,
    human_size,
    say,
    send,
)

EXIT_GRADED, EXIT_REFUSED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 3
CHUNK_MIB = 16


def register(subparsers) -> None:
    submit = subparsers.add_parser(
        "submit",
        help="send MLE-bench run groups to a site (resumable) and follow their grading",
        description="Send run-group folders, a submissions.jsonl with its files, or a ready "
        "archive to an mleboard site, then follow grading and print the experiment's Any "
        "Medal % per split. Interrupted (connection, Ctrl-C)? Run the same command again: "
        "it continues where it stopped. Exit codes: 0 graded, 1 refused or failed, 2 usage, "
        "3 interrupted (resumable).",
    )
    submit.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    submit.add_argument(
        "--site",
        help="the site's address, e.g. https://mleboard.example.org (default: the one "
        "`mleboard login` was last given)",
    )
    submit.add_argument(
        "--token", help="an API token (default: $MLEBOARD_TOKEN, else `mleboard login`'s)"
    )
    meta = submit.add_argument_group("the experiment (one of)")
    meta.add_argument(
        "--metadata",
        type=Path,
        metavar="FILE",
        help="a JSON file: scaffold, model and the optional keys of the upload form",
    )
    meta.add_argument("--scaffold", help="the agent's scaffold, e.g. aide")
    meta.add_argument("--model", help="the model behind it, e.g. o1-preview")
    submit.add_argument("--name", help="a name for the experiment")
    conditions = submit.add_argument_group(
        "the conditions the runs had (optional; publishing needs them all)"
    )
    conditions.add_argument(
        "--disclosure",
        type=Path,
        metavar="FILE",
        help="a YAML (or JSON) file of the fields below, e.g. `gpus: 1`; flags override it",
    )
    for f in disclosure.FIELDS:
        conditions.add_argument(
            "--" + f.name.replace("_", "-"), dest=f"disclose_{f.name}", metavar="V", help=f.help
        )
    submit.add_argument(
        "--no-wait",
        action="store_true",
        help="print the upload's address once sent, do not follow grading",
    )
    submit.add_argument(
        "--dry-run",
        action="store_true",
        help="check the layout and every submission here, print what would be sent, send nothing",
    )
    submit.add_argument(
        "--data-dir",
        type=Path,
        help="MLE-bench's prepared data, for --dry-run's full validation (default: $MLEBOARD_DATA_DIR)",
    )
    submit.add_argument(
        "--chunk-size",
        type=int,
        default=CHUNK_MIB,
        metavar="MIB",
        help=f"bytes per request, in MiB (default {CHUNK_MIB})",
    )
    submit.add_argument(
        "--retries",
        type=int,
        default=0,
        metavar="N",
        help="reconnect this many times before giving up with exit code 3 (default 0)",
    )
    submit.set_defaults(handler=cmd_submit)

    login = subparsers.add_parser(
        "login",
        help="keep an API token for a site (in a file only you can read)",
        description="Check a token against the site and keep it in the user's config "
        "folder (mode 0600) for `mleboard submit` to use, and remember the site: later "
        "commands need no --site. Make tokens on the site's "
        "API tokens page.",
    )
    login.add_argument(
        "--site", help="the site's address (default: the one last given to `mleboard login`)"
    )
    login.add_argument("--token", help="the token (default: asked for, not echoed)")
    login.set_defaults(handler=cmd_login)


# ---------------------------------------------------------------- login


def cmd_login(args: argparse.Namespace) -> int:
    from cli.site_api import Site, SiteError, resolve_site, save_site, save_token

    try:
        site = resolve_site(args.site)
    except SiteError as error:
        say(f"mleboard login: {error}")
        return EXIT_USAGE
    token = args.token or getpass.getpass(f"API token (make one at {site}/accounts/tokens/): ")
    if not token.strip():
        say("mleboard login: no token given")
        return EXIT_USAGE
    try:
        Site(site, token.strip()).check_token()
    except SiteError as error:
        say(f"mleboard login: {error}")
        return EXIT_REFUSED
    path = save_token(site, token.strip())
    save_site(site)
    print(f"Token for {site} saved in {path} (readable by you only).")
    print(f"`mleboard submit` sends to {site} unless given another --site.")
    return EXIT_GRADED


# ---------------------------------------------------------------- submit


def cmd_submit(args: argparse.Namespace) -> int:
    from cli.archive_stream import LayoutProblem
    from cli.site_api import SiteError

    try:
        return _submit(args)
    except Usage as error:
        say(f"mleboard submit: {error}")
        return EXIT_USAGE
    except (Refused, LayoutProblem) as error:
        say(f"mleboard submit: refused: {error}")
        return EXIT_REFUSED
    except SiteError as error:
        say(f"mleboard submit: {error}")
        return EXIT_REFUSED
    except Interrupted as error:
        say(f"mleboard submit: interrupted: {error}")
        return EXIT_INTERRUPTED


def _metadata(args) -> dict:
    if args.metadata and (args.scaffold or args.model):
        raise Usage("give --metadata FILE, or --scaffold and --model, not both")
    if args.metadata:
        try:
            data = json.loads(args.metadata.read_text(encoding="utf-8"))
        except OSError as error:
            raise Usage(f"cannot read --metadata {args.metadata}: {error.strerror}") from None
        except (ValueError, RecursionError) as error:
            raise Usage(f"--metadata {args.metadata} is not valid JSON: {error}") from None
        if not isinstance(data, dict):
            raise Usage(
                f'--metadata {args.metadata} must hold a JSON object, like {{"scaffold": "aide", "model": "o1-preview"}}'
            )
    elif args.scaffold and args.model:
        data = {"scaffold": args.scaffold, "model": args.model}
    else:
        raise Usage("say which agent made the runs: --scaffold S --model M, or --metadata FILE")
    if args.name:
        data["name"] = args.name
    missing = [k for k in ("scaffold", "model") if not str(data.get(k) or "").strip()]
    if missing:
        raise Usage(f"the metadata needs {' and '.join(missing)}")
    disclosed = _disclosed(args, data.get("disclosure") or {})
    if disclosed:
        data["disclosure"] = disclosed
    return data


def _disclosed(args, from_metadata: dict) -> dict:
    """The conditions, checked here as the site checks them: the metadata file's, then
    ``--disclosure FILE``'s, then each flag's (the last said wins)."""
    values = {}
    try:
        if from_metadata:
            values.update(disclosure.parse(from_metadata))
        if args.disclosure:
            try:
                data = args.disclosure.read_bytes()
            except OSError as error:
                raise Usage(
                    f"cannot read --disclosure {args.disclosure}: {error.strerror}"
                ) from None
            values.update(disclosure.read_file(data, str(args.disclosure)))
        flags = {
            f.name: getattr(args, f"disclose_{f.name}")
            for f in disclosure.FIELDS
            if getattr(args, f"disclose_{f.name}", None) is not None
        }
        values.update(disclosure.parse(flags))
    except disclosure.DisclosureError as error:
        raise Usage(f"the conditions are not valid: {error}") from None
    return values


def _submit(args) -> int:
    from cli.site_api import SiteError, resolve_site, resolve_token

    try:
        site = resolve_site(args.site)
    except SiteError as error:
        raise Usage(str(error)) from None
    if args.chunk_size < 1 or args.retries < 0:
        raise Usage("--chunk-size must be at least 1 (MiB) and --retries at least 0")
    metadata = _metadata(args)
    payload = Payload(args.paths, metadata)
    contents = _check_layout(payload, metadata)
    if args.dry_run:
        return _dry_run(payload, contents, metadata, site, args)
    token, source = resolve_token(site, args.token)
    if not token:
        raise Usage(
            f"no API token for {site}: make one at {site}/accounts/tokens/, then run "
            f"`mleboard login --site {site}` (or pass --token, or set $MLEBOARD_TOKEN)"
        )
    from cli.site_api import Site

    client = Site(site, token)
    upload_path = send(client, payload, metadata, args)
    page = client.absolute(upload_path.replace("/api/uploads/", "/uploads/"))
    if args.no_wait:
        print(f"Sent. Grading runs on the site: {page}")
        return EXIT_GRADED
    return _follow(client, upload_path, page)


# ---------------------------------------------------------------- checking here


def _known_competitions() -> set[str]:
    from benchmark.catalogue import load_catalogue

    return set(load_catalogue(include_demo=True))


def _check_layout(payload: Payload, metadata: dict):
    """Read the upload as the site will (same readers, same catalogue): a layout it would
    refuse is refused here, before anything is sent. A ready archive is read by the site."""
    if payload.members is None:
        return None
    from benchmark.upload_layout import UploadLayoutError, read_upload
    from benchmark.upload_tree import UploadTree

    seeds = metadata.get("seeds") if isinstance(metadata.get("seeds"), dict) else None
    try:
        return read_upload(
            UploadTree.from_members(payload.members.files, payload.members.dirs),
            known_competitions=_known_competitions(),
            seeds=seeds,
        )
    except UploadLayoutError as error:
        raise Refused(str(error)) from None
    except (ValueError, UnicodeDecodeError) as error:
        raise Refused(str(error)) from None


def _dry_run(payload: Payload, contents, metadata: dict, site: str, args) -> int:
    from config import env, is_set

    data_dir = args.data_dir or (env("MLEBOARD_DATA_DIR") if is_set("MLEBOARD_DATA_DIR") else None)
    if contents is not None:
        return _dry_run_report(payload, contents, metadata, site, data_dir)
    # A ready archive: unpacked (safely, as the site does) into a folder removed afterwards.
    from benchmark.archive import ArchiveRefused, extract_archive
    from benchmark.upload_layout import UploadLayoutError, read_upload

    with tempfile.TemporaryDirectory(prefix="mleboard-dry-run-") as temp:
        dest = Path(temp) / "upload"
        try:
            extract_archive(payload.path, dest)
            contents = read_upload(dest, known_competitions=_known_competitions())
        except (ArchiveRefused, UploadLayoutError, ValueError) as error:
            raise Refused(str(error)) from None
        return _dry_run_report(payload, contents, metadata, site, data_dir)


def _conditions_line(values: dict) -> str:
    """E.g. "Conditions: beyond (2 GPUs); not disclosed: RAM; publishing needs: RAM"."""
    found = disclosure.comparability(values)
    line = f"Conditions: {found.cls}"
    if found.reasons:
        line += f" ({', '.join(found.reasons)})"
    if found.undisclosed:
        line += f"; not disclosed: {', '.join(found.undisclosed)}"
    if lacking := disclosure.missing(values):
        line += f"; publishing needs: {', '.join(disclosure.labels(lacking))}"
    return line


def _dry_run_report(payload: Payload, contents, metadata: dict, site: str, data_dir) -> int:
    name = metadata.get("name") or f"{metadata['scaffold']} × {metadata['model']}"
    print(
        f"Would send {payload.name} ({human_size(payload.length)}, {payload.length:,} bytes) to {site}"
    )
    print(f"Experiment: {name}")
    print(_conditions_line({**contents.disclosure, **(metadata.get("disclosure") or {})}))
    for warning in contents.warnings:
        print(f"  note: {warning}")
    if contents.kind == "reports":
        n = sum(len(g.reports) for g in contents.reported)
        print(f"{n} reported grades in {len(contents.reported)} report file(s), stored as reported")
        print("Nothing was sent (--dry-run).")
        return EXIT_GRADED
    runs = sorted(contents.runs, key=lambda r: (r.competition_id, r.seed))
    seeds = ", ".join(str(s) for s in sorted({r.seed for r in runs}))
    competitions = len({r.competition_id for r in runs})
    print(f"{len(runs)} runs: {competitions} competitions × seeds {seeds}")
    invalid = without = 0
    checked: dict[str, set[str]] = {}
    for run in runs:
        verdict, level = _check_submission(run, data_dir)
        if level:
            checked.setdefault(level, set()).add(run.competition_id)
        invalid += verdict.startswith("invalid")
        without += run.submission_path is None
        print(f"  {run.competition_id:<45} seed {run.seed:<3} {verdict}")
    note = _levels_note(checked, data_dir)
    if note:
        print(note)
    if invalid:
        # As the site counts them: a run without a submission is graded invalid too.
        made = f" ({without} without a submission)" if without else ""
        print(f"{invalid} run(s) would be graded as invalid{made}: they count as no medal.")
    print("Nothing was sent (--dry-run).")
    return EXIT_GRADED


def _check_submission(run, data_dir: Path | None) -> tuple[str, str]:
    """The verdict on one submission, in the grading's words, and how far it could be
    checked: ``full`` (the graders' own validation, with the prepared answers), ``sample``
    (columns and row count against the public sample submission), ``basic`` (a readable
    CSV with a header), or "" when grading refuses it without reading it (no submission,
    not a .csv file)."""
    from benchmark.grading import NO_SUBMISSION
    from graders import missing_submission_reason

    if run.submission_path is None:
        return f"invalid: {NO_SUBMISSION}", ""
    path = Path(run.submission_path)
    if reason := missing_submission_reason(path):
        return f"invalid: {reason}", ""
    if data_dir is not None:
        import graders
        from graders import AnswersMissing, GraderError

        try:
            result = graders.validate_submission(path, run.competition_id, data_dir)
        except AnswersMissing:
            pass
        except GraderError as error:
            return f"not checked: {error}", "full"
        else:
            return ("valid" if result.valid else f"invalid: {result.message}"), "full"
        sample = data_dir / run.competition_id / "prepared" / "public" / "sample_submission.csv"
        if sample.is_file():
            return _compare_with_sample(path, sample), "sample"
    return _basic_csv(path), "basic"


def _header_and_rows(path: Path) -> tuple[list[str], int]:
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as handle:
        reader = csv.reader(handle)
        header = next(reader, [])
        rows = sum(1 for _ in reader)
    return header, rows


def _basic_csv(path: Path) -> str:
    try:
        header, rows = _header_and_rows(path)
    except (OSError, UnicodeError) as error:
        return f"invalid: cannot read it ({error})"
    if not header:
        return "invalid: the file is empty"
    return (
        f"readable ({rows:,} rows; columns {', '.join(header[:4])}{'…' if len(header) > 4 else ''})"
    )


def _compare_with_sample(path: Path, sample: Path) -> str:
    try:
        header, rows = _header_and_rows(path)
        want, want_rows = _header_and_rows(sample)
    except (OSError, UnicodeError) as error:
        return f"invalid: cannot read it ({error})"
    if not header:
        return "invalid: the file is empty"
    missing = [c for c in want if c not in header]
    if missing:
        return f"invalid: missing column(s) {', '.join(missing)} of the sample submission"
    if rows != want_rows:
        return f"invalid: {rows:,} rows, the sample submission has {want_rows:,}"
    return "columns and row count match the sample submission"


def _levels_note(checked: dict[str, set[str]], data_dir: Path | None) -> str:
    """How far the submissions were checked (``checked``: the competitions checked at each
    level), and what would check them further."""
    if not checked:
        return ""
    if set(checked) == {"full"}:
        return "Checked with the graders' own validation (the prepared answers in --data-dir)."
    if data_dir is None:
        return (
            "Checked here: the layout, the competitions and that each CSV reads. Give "
            "--data-dir (MLE-bench's prepared data) to check columns against the sample "
            "submissions, or with the private answers, exactly as the site's graders will."
        )
    lines = []
    if "full" in checked:
        lines.append(
            "Checked with the graders' own validation where --data-dir has the prepared "
            f"answers ({', '.join(sorted(checked['full']))})."
        )
    if "sample" in checked:
        lines.append(
            f"{data_dir} has no prepared answers (prepared/private/) for "
            f"{', '.join(sorted(checked['sample']))}: checked against the public sample "
            "submissions (columns, row count); the ids and values are checked by the site."
        )
    if "basic" in checked:
        lines.append(
            f"{data_dir} has neither prepared answers nor a sample submission for "
            f"{', '.join(sorted(checked['basic']))}: checked that each CSV reads; the site "
            "checks the rest."
        )
    return "\n".join(lines)


# ---------------------------------------------------------------- following grading


def _follow(client, upload_path: str, page: str, poll: float = 2.0) -> int:
    from cli.site_api import SiteError

    say(f"Sent. Following grading at {page}")
    last = None
    try:
        while True:
            progress = client.get(upload_path)
            line = (
                progress["status"],
                progress["runs_graded"],
                progress["runs_failed"],
                progress["runs_invalid"],
                progress["runs_total"],
            )
            if line != last:
                say(
                    f"Grading: {progress['status']}: {progress['runs_graded']} of {progress['runs_total']} runs graded, {progress['runs_failed']} failed, {progress['runs_invalid']} invalid"
                )
                last = line
            if progress["status"] in ("graded", "failed"):
                break
            time.sleep(poll)
    except SiteError as error:
        if error.unreachable:
            raise Interrupted(
                f"{error}. The upload is complete; run the same command again to follow its grading."
            ) from None
        raise
    except KeyboardInterrupt:
        raise Interrupted(
            "stopped following; the site grades on. Run the same command again to follow it."
        ) from None
    for warning in progress.get("warnings") or []:
        say(f"  note: {warning}")
    if progress["status"] == "failed" and not progress.get("experiment"):
        raise Refused(f"the site refused the upload: {progress.get('error')}")
    for failure in progress.get("failures") or []:
        say(
            f"  failed to grade: {failure.get('competition_id')} seed {failure.get('seed')}: {failure.get('reason')}"
        )
    for invalid in (progress.get("invalid_submissions") or [])[:20]:
        say(
            f"  invalid submission: {invalid.get('competition_id')} seed {invalid.get('seed')}: {invalid.get('reason')}"
        )
    experiment = progress.get("experiment")
    url = client.absolute(f"/experiments/{experiment}/")
    print(f"Experiment: {url}")
    _print_figures(client, experiment)
    return EXIT_REFUSED if progress["runs_failed"] else EXIT_GRADED


def _print_figures(client, experiment: int, wait: float = 120) -> None:
    """Any Medal % ± SEM per split, once the site has computed the figures."""
    from benchmark.splits import FIGURE_SPLITS, split_label

    deadline = time.monotonic() + wait
    while True:
        figures = client.get(f"/api/experiments/{experiment}/").get("figures") or {}
        medal = {
            split: (figures.get(split) or {}).get("metrics", {}).get("any_medal_percentage")
            for split in FIGURE_SPLITS
        }
        medal = {k: v for k, v in medal.items() if v and v.get("mean") is not None}
        if medal or time.monotonic() > deadline:
            break
        time.sleep(2)
    if not medal:
        print("Figures are still being computed: see the experiment's page.")
        return
    print("Any Medal % (mean ± SEM over seeds):")
    for split, metric in medal.items():
        sem = metric.get("standard_error") or 0.0
        print(f"  {split_label(split):<20} {metric['mean']:6.1f} ± {sem:.1f}")

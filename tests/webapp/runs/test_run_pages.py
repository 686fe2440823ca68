"""The run page and its API: grade, submission head, logs paged and searched, code
highlighted, AIDE's tree, timelines, the zip; paths confined to the run's folder and
runs visible only as their experiment or launch is."""

import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from django.urls import reverse

from tests.support.run_page_fixtures import agent_run_with_output, aide_upload
from webapp.competitions.services import catalogue_sync
from webapp.runs.run_files import upload_run_folder

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def catalogue():
    catalogue_sync()


@pytest.fixture
def as_alice(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def run(alice, media):
    return aide_upload(alice)


def api(run, tail=""):
    return f"/api/runs/{run.pk}/{tail}"


def test_the_uploaded_runs_folder_is_found(run):
    folder = upload_run_folder(run)
    assert folder is not None and (folder / "logs" / "run.log").is_file()
    run.submission_path = ""  # without a submission: found from run group + seed
    assert upload_run_folder(run) == folder


def test_the_run_page_shows_grade_submission_logs_code_and_tree(as_alice, run):
    response = as_alice.get(reverse("run-page-result", args=[run.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "0.80123" in html and "71.5" in html and "above median" in html
    assert "0000_01" in html and "0019_01" in html and "0020_01" not in html  # 20 rows only
    assert 'data-path="logs/run.log"' in html and 'data-path="code/train.py"' in html
    assert "AIDE&#x27;s search tree" in html or "AIDE's search tree" in html
    assert "logs/aide/journal.json" in html
    assert f"/runs/result/{run.pk}/download.zip" in html


def test_the_experiment_page_links_each_run(as_alice, run):
    html = as_alice.get(run.experiment.get_absolute_url()).content.decode()
    assert f'href="/runs/result/{run.pk}/"' in html


def test_detail_api_lists_grade_and_files(as_alice, run):
    body = as_alice.get(api(run)).json()
    assert body["grade"]["score"] == 0.80123 and body["grade"]["thresholds"]["gold"] == 0.82
    paths = {f["path"]: f["kind"] for f in body["files"]}
    assert paths["logs/run.log"] == "log" and paths["code/train.py"] == "code"
    assert paths["submission/submission.csv"] == "submission"


def test_files_are_paged_by_byte_offsets(as_alice, run):
    first = as_alice.get(api(run, "files/logs/run.log?length=1000")).json()
    assert first["offset"] == 0 and first["length"] == 1000 and first["text"].startswith("step 0:")
    assert first["next_offset"] == 1000 and not first["eof"]
    text, offset = first["text"], first["next_offset"]
    while offset is not None:
        page = as_alice.get(api(run, f"files/logs/run.log?offset={offset}")).json()
        assert page["length"] <= 64 * 1024
        text += page["text"]
        offset = page["next_offset"]
    assert text.encode() == (upload_run_folder(run) / "logs" / "run.log").read_bytes()
    huge = as_alice.get(api(run, "files/logs/run.log?length=99999999999")).json()
    assert huge["length"] <= 1024 * 1024


def test_a_character_cut_by_a_page_is_left_for_the_next(as_alice, run):
    folder = upload_run_folder(run)
    (folder / "logs" / "utf8.log").write_bytes(("é" * 10 + "\n").encode())
    page = as_alice.get(api(run, "files/logs/utf8.log?length=3")).json()
    assert page["text"] == "é" and page["next_offset"] == 2


def test_search_returns_line_numbers_and_snippets(as_alice, run):
    body = as_alice.get(api(run, "search?file=logs/run.log&q=needle")).json()
    assert [h["line"] for h in body["hits"]] == [1235, 2001]
    assert "NEEDLE found" in body["hits"][0]["snippet"]
    assert len(body["hits"][1]["snippet"]) <= 240 and "NEEDLE" in body["hits"][1]["snippet"]
    page = as_alice.get(api(run, f"files/logs/run.log?offset={body['hits'][0]['offset']}")).json()
    assert page["text"].startswith("step 1234: NEEDLE")
    capped = as_alice.get(api(run, "search?file=logs/run.log&q=step")).json()
    assert len(capped["hits"]) == 200 and capped["truncated"]
    assert as_alice.get(api(run, "search?file=logs/run.log&q=")).status_code == 400


def test_code_is_highlighted(as_alice, run):
    body = as_alice.get(api(run, "files/code/train.py?highlight=1")).json()
    assert 'class="highlight"' in body["html"] and "<span" in body["html"]
    assert not body["too_large"]


@pytest.mark.parametrize(
    "path",
    [
        "files/../../../../etc/passwd",
        "files/%2e%2e/%2e%2e/metadata.json",
        "files/logs/../../metadata.json",
        "files//etc/passwd",
        "files/%2Fetc%2Fpasswd",
        "files/logs/nope.log",
        "files/logs",
        "search?file=../metadata.json&q=run",
        "search?file=/etc/passwd&q=root",
        "timeline?file=../../metadata.json",
    ],
)
def test_paths_outside_the_run_folder_are_404(as_alice, run, path):
    assert as_alice.get(api(run, path)).status_code == 404


def test_symlinks_are_404_and_left_out(as_alice, run, tmp_path):
    folder = upload_run_folder(run)
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    os.symlink(secret, folder / "logs" / "escape.log")
    os.symlink(tmp_path, folder / "logs" / "outside")
    os.symlink(folder / "logs" / "run.log", folder / "logs" / "inner.log")
    for rel in ("logs/escape.log", "logs/outside/secret.txt", "logs/inner.log"):
        assert as_alice.get(api(run, f"files/{rel}")).status_code == 404
        assert as_alice.get(api(run, f"search?file={rel}&q=secret")).status_code == 404
    listed = {f["path"] for f in as_alice.get(api(run)).json()["files"]}
    assert not listed & {"logs/escape.log", "logs/inner.log", "logs/outside/secret.txt"}
    data = b"".join(as_alice.get(f"/runs/result/{run.pk}/download.zip").streaming_content)
    assert b"top secret" not in data


def test_download_zips_the_run_folder(as_alice, run):
    response = as_alice.get(f"/runs/result/{run.pk}/download.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = archive.namelist()
    assert any(n.endswith("/logs/run.log") for n in names)
    train = next(n for n in names if n.endswith("/code/train.py"))
    assert archive.read(train).startswith(b"import pandas")


def test_another_users_unpublished_run_is_404(client, bob, run):
    urls = [
        f"/runs/result/{run.pk}/",
        f"/runs/result/{run.pk}/download.zip",
        api(run),
        api(run, "files/logs/run.log"),
        api(run, "search?file=logs/run.log&q=step"),
        api(run, "trajectory/"),
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    client.force_login(bob)
    for url in urls:
        assert client.get(url).status_code == 404, url
    run.experiment.is_published = True
    run.experiment.save()
    assert client.get(f"/runs/result/{run.pk}/").status_code == 200
    assert client.get(api(run, "files/logs/run.log")).status_code == 200


def test_trajectory_api_gives_the_tree(as_alice, run):
    body = as_alice.get(api(run, "trajectory/")).json()
    assert body["journal"] == "logs/aide/journal.json"
    assert len(body["nodes"]) == 250 and body["best"] == "n249"
    kinds = {n["kind"] for n in body["nodes"]}
    assert kinds == {"draft", "debug", "improve"}
    assert body["nodes"][0]["code"] == "print(0)"
    compact = as_alice.get(api(run, "trajectory/?compact=1")).json()
    assert compact["nodes"][0]["code"] == "" and len(compact["best_so_far"]) > 100
    node = as_alice.get(api(run, "trajectory/?node=n7")).json()
    assert node["kind"] == "debug" and 'class="highlight"' in node["code_html"]
    assert as_alice.get(api(run, "trajectory/?node=ghost")).status_code == 404


def test_a_broken_journal_is_a_clear_error(alice, client, media):
    run = aide_upload(alice, journal=b"{not json")
    client.force_login(alice)
    response = client.get(api(run, "trajectory/"))
    assert response.status_code == 422 and "not valid JSON" in response.json()["detail"]
    assert client.get(f"/runs/result/{run.pk}/").status_code == 200


def test_a_run_without_journal_has_no_tree(as_alice, alice, media):
    run = aide_upload(alice, journal=b"")
    folder = upload_run_folder(run)
    Path(folder / "logs" / "aide" / "journal.json").unlink()
    assert as_alice.get(api(run, "trajectory/")).status_code == 404


def test_agent_run_page_with_validation_counts_and_timeline(as_alice, alice, media):
    agent_run = agent_run_with_output(alice)
    response = as_alice.get(f"/runs/agent/{agent_run.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "answered 3" in html and "rate_limited 1" in html
    assert 'data-file="logs/events.jsonl"' in html and 'data-path="run.log"' in html
    events = as_alice.get(f"/api/runs/agent/{agent_run.pk}/timeline?file=logs/events.jsonl").json()[
        "events"
    ]
    assert [e["label"] for e in events] == ["action: run", "observation: run", "action: finish"]
    assert "python train.py" in events[0]["body"]
    body = as_alice.get(f"/api/runs/agent/{agent_run.pk}/").json()
    assert body["agent_run"]["validation_counts"]["answered"] == 3
    launch_html = as_alice.get(agent_run.launch.get_absolute_url()).content.decode()
    assert f'href="/runs/agent/{agent_run.pk}/"' in launch_html


def test_agent_runs_of_others_are_404(client, bob, alice, media):
    agent_run = agent_run_with_output(alice)
    client.force_login(bob)
    assert client.get(f"/runs/agent/{agent_run.pk}/").status_code == 404
    assert client.get(f"/api/runs/agent/{agent_run.pk}/files/run.log").status_code == 404


def test_schema_documents_the_run_api(client):
    schema = client.get("/api/schema/?format=json")
    paths = json.loads(schema.content)["paths"] if schema["Content-Type"].endswith("json") else None
    if paths is None:
        import yaml

        paths = yaml.safe_load(schema.content)["paths"]
    assert "/api/runs/{id}/" in paths or "/api/runs/{pk}/" in paths
    assert any(p.endswith("/search") for p in paths)


def test_validation_logs_are_linked_and_a_too_large_zip_is_refused(
    as_alice, alice, media, monkeypatch
):
    from webapp.runs import run_files

    agent_run = agent_run_with_output(alice)
    folder = Path(agent_run.output_dir)
    (folder / "logs" / "validation.jsonl").write_bytes(
        b'{"type": "validation", "time": "00:01", "answer": "valid"}\n'
    )
    html = as_alice.get(f"/runs/agent/{agent_run.pk}/").content.decode()
    assert 'id="validation-files"' in html and 'data-path="logs/validation.jsonl"' in html
    monkeypatch.setattr(run_files, "ZIP_MAX_BYTES", 10)
    assert as_alice.get(f"/runs/agent/{agent_run.pk}/download.zip").status_code == 413


def test_search_reads_huge_lines_in_pieces(tmp_path):
    from webapp.runs.run_files import search_file

    path = tmp_path / "huge.log"
    path.write_bytes(b"first\n" + b"y" * (3 * 1024 * 1024) + b"NEEDLE\nafter NEEDLE\nlast")
    hits = search_file(path, "needle")["hits"]
    assert [h["line"] for h in hits] == [2, 3]
    assert hits[1]["offset"] == 6 + 3 * 1024 * 1024 + 7 and hits[1]["snippet"] == "after NEEDLE"
    assert search_file(path, "last")["hits"][0]["line"] == 4


def test_the_run_page_lists_the_recorded_validation_calls(as_alice, alice, media):
    agent_run = agent_run_with_output(alice)
    folder = Path(agent_run.output_dir)
    records = [
        {
            "at": "2026-01-01T00:00:05+00:00",
            "elapsed_s": 723.4,
            "status": 200,
            "valid": False,
            "message": "Submission invalid! <b>id</b> missing",
            "bytes": 120,
        },
        {
            "at": "2026-01-01T00:10:00+00:00",
            "elapsed_s": 1500,
            "status": 429,
            "valid": None,
            "message": "Too many validation requests.",
            "bytes": 120,
        },
    ]
    (folder / "validation_calls.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records) + "not json\n"
    )
    # One the agent wrote itself is not the harness's record.
    (folder / "logs" / "validation_calls.jsonl").write_text(
        json.dumps({**records[0], "message": "forged"}) + "\n"
    )
    html = as_alice.get(f"/runs/agent/{agent_run.pk}/").content.decode()
    assert 'id="validation-calls-table"' in html
    assert "12 min 3 s" in html and "25 min 0 s" in html
    assert "Submission invalid! &lt;b&gt;id&lt;/b&gt; missing" in html and "<b>id</b>" not in html
    assert html.index("12 min 3 s") < html.index("25 min 0 s")  # newest last
    assert "invalid" in html and ">429<" in html and "forged" not in html
    assert "No validation calls were recorded" not in html
    body = as_alice.get(f"/api/runs/agent/{agent_run.pk}/").json()
    calls = body["validation_calls"]["calls"]
    assert [c["status"] for c in calls] == [200, 429]
    assert calls[0]["valid"] is False and calls[1]["valid"] is None
    assert body["validation_calls"]["truncated"] is False


def test_only_the_last_calls_are_read(tmp_path):
    from webapp.runs.run_files import validation_calls

    line = {"at": "", "elapsed_s": 1, "status": 200, "valid": True, "message": "ok " * 300}
    (tmp_path / "validation_calls.jsonl").write_text(
        "".join(json.dumps({**line, "bytes": i}) + "\n" for i in range(3000))
    )
    result = validation_calls(tmp_path, "validation_calls.jsonl")
    assert [c["bytes"] for c in result["calls"]] == list(range(2500, 3000))
    assert result["truncated"] is True


def test_without_a_record_the_page_says_so(as_alice, alice, media, run):
    agent_run = agent_run_with_output(alice)
    html = as_alice.get(f"/runs/agent/{agent_run.pk}/").content.decode()
    assert "No validation calls were recorded for this run." in html
    assert as_alice.get(f"/api/runs/agent/{agent_run.pk}/").json()["validation_calls"] is None
    html = as_alice.get(reverse("run-page-result", args=[run.pk])).content.decode()
    assert "No validation calls were recorded for this run." in html


def test_an_uploaded_runs_record_is_found_in_its_folder(as_alice, run):
    folder = upload_run_folder(run)
    (folder / "logs" / "validation_calls.jsonl").write_text(
        json.dumps({"at": "", "elapsed_s": 61, "status": 200, "valid": True, "message": "fine"})
        + "\n"
    )
    html = as_alice.get(reverse("run-page-result", args=[run.pk])).content.decode()
    assert "1 min 1 s" in html and "fine" in html
    body = as_alice.get(api(run)).json()
    assert body["validation_calls"]["file"] == "logs/validation_calls.jsonl"


@pytest.mark.parametrize("offset", ["17592186044415", "9223372036854775807", "-5", "99999"])
def test_a_timeline_from_any_offset_is_a_page_not_an_error(as_alice, alice, media, offset):
    """An offset past the end (or past what the system can seek to) reads nothing, as the
    files endpoint does; a negative one reads from the start."""
    agent_run = agent_run_with_output(alice)
    url = f"/api/runs/agent/{agent_run.pk}/timeline?file=logs/events.jsonl&offset={offset}"
    response = as_alice.get(url)
    assert response.status_code == 200
    body = response.json()
    if offset == "-5":
        assert len(body["events"]) == 3
    else:
        assert body["events"] == [] and body["next_offset"] is None
    page = as_alice.get(f"/api/runs/agent/{agent_run.pk}/files/logs/events.jsonl?offset={offset}")
    assert page.status_code == 200

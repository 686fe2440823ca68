"""What the upload page says: a file that is not what its name says is refused
before a byte is sent; an archive sent again after it was refused says so, not "being
processed again"; a mistake is said beside its field and the chosen file is asked for
again by name. Screenshots in test-artifacts/."""

import re

import pytest

from tests.support.browser import shot
from webapp.results.models import Upload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# An upload's own page; "**/uploads/*/" would also match the form at /uploads/new/,
# where the browser still is while the archive is read and sent.
UPLOAD_PAGE = re.compile(r".*/uploads/\d+/$")


@pytest.fixture
def ivy(django_user_model, media):
    return django_user_model.objects.create_user("ivy", password="pw-ivy-12345")


def _sign_in(page, live_server):
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", "ivy")
    page.fill("input[name=password]", "pw-ivy-12345")
    page.click("main form button[type=submit]")
    page.wait_for_selector("header.top button.link")


def _fill(page, archive):
    page.set_input_files("input[name=archive]", str(archive))
    page.fill("input[name=scaffold]", "aide")
    page.fill("input[name=model]", "gpt-4o")


def test_a_text_file_named_zip_is_refused_before_it_is_sent(page, live_server, ivy, tmp_path):
    fake = tmp_path / "runs.zip"
    fake.write_text("these are my notes, not an archive\n")
    _sign_in(page, live_server)
    page.goto(live_server.url + "/uploads/new/")
    sent = []
    page.on("request", lambda r: r.method in ("POST", "PATCH") and sent.append(r.url))
    _fill(page, fake)
    page.click("#upload-form button[type=submit]")
    error = page.locator("#field-error-archive")
    error.wait_for()
    assert "“runs.zip” is not a zip archive" in error.inner_text()
    # Beside the file field, in its own row of the form.
    assert error.evaluate(
        "e => e.closest('#upload-form > div').querySelector('input[name=archive]') !== null"
    )
    assert sent == [] and not Upload.objects.exists()
    shot(page, "upload-not-a-zip")
    # Bad seeds: said beside the seeds field.
    page.fill("textarea[name=seeds], input[name=seeds]", "{not json")
    page.click("#upload-form button[type=submit]")
    page.locator("#field-error-seeds").wait_for()
    assert "seeds is not valid JSON" in page.locator("#field-error-seeds").inner_text()
    assert page.console_errors == []


def test_without_javascript_refusals_are_true_and_beside_their_field(
    browser, live_server, ivy, tmp_path
):
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    _sign_in(page, live_server)
    notes = tmp_path / "notes.dat"
    notes.write_text("not an archive at all\n")
    page.goto(live_server.url + "/uploads/new/")
    _fill(page, notes)
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(UPLOAD_PAGE)
    first = page.locator(".messages").inner_text()
    assert "Upload refused: not an archive" in first
    upload = Upload.objects.get()
    assert upload.status == Upload.Status.FAILED
    # The same file again: it was refused and would be again; nothing is processed.
    page.goto(live_server.url + "/uploads/new/")
    _fill(page, notes)
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(f"**/uploads/{upload.pk}/")
    again = page.locator(".messages").inner_text()
    assert "You uploaded this archive before and it was refused: not an archive" in again
    assert "The same file fails the same way" in again
    assert "being processed again" not in page.content()
    assert page.locator("#up-status").inner_text() == "failed"
    upload.refresh_from_db()
    assert upload.status == Upload.Status.FAILED and upload.error.startswith("not an archive")
    shot(page, "upload-sent-again-after-refusal")
    # A mistake in a field: said beside it, and the chosen file asked for again by name.
    page.goto(live_server.url + "/uploads/new/")
    _fill(page, notes)
    page.fill("[name=seeds]", "{not json")
    page.click("#upload-form button[type=submit]")
    row = page.locator("#upload-form > div", has=page.locator("[name=seeds]"))
    assert "seeds is not valid JSON" in row.inner_text()
    archive_row = page.locator("#upload-form > div", has=page.locator("input[name=archive]"))
    assert "You chose “notes.dat”: choose it again" in archive_row.inner_text()
    assert page.locator(".messages").count() == 0
    shot(page, "upload-field-errors")
    context.close()


def test_failed_and_graded_uploads_have_different_colours(page, live_server, ivy):
    for status, name in ((Upload.Status.FAILED, "bad.zip"), (Upload.Status.GRADED, "good.zip")):
        Upload.objects.create(
            owner=ivy,
            archive=f"uploads/{name}",
            original_name=name,
            size=1,
            sha256=status * 8,
            status=status,
        )
    _sign_in(page, live_server)
    page.goto(live_server.url + "/uploads/")
    colours = {
        name: page.locator("tr", has_text=name)
        .locator(".badge.status")
        .evaluate("b => [b.textContent, getComputedStyle(b).backgroundColor]")
        for name in ("bad.zip", "good.zip")
    }
    assert colours["bad.zip"][0] == "failed" and colours["good.zip"][0] == "graded"
    assert colours["bad.zip"][1] != colours["good.zip"][1]
    shot(page, "upload-list-status-colours")

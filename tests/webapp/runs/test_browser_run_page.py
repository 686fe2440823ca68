"""The run page in a browser: a log searched and paged, a code file opened, and an
uploaded AIDE run's 200-node search tree drawn (the page records how long the drawing and
the journal's request took; the test prints them, it does not race them)."""

import pytest

from tests.support.browser import shot
from tests.support.run_page_fixtures import agent_run_with_output, aide_upload
from webapp.competitions.services import catalogue_sync

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def sign_in(page, live_server, username, password):
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form button[type=submit]")
    page.wait_for_url(live_server.url + "/")


def test_run_page_logs_code_and_aide_tree(page, live_server, media, django_user_model):
    catalogue_sync()
    owner = django_user_model.objects.create_user("rita", password="pw-rita-12345")
    run = aide_upload(owner, nodes=200)
    sign_in(page, live_server, "rita", "pw-rita-12345")

    page.goto(f"{live_server.url}{run.experiment.get_absolute_url()}")
    page.click("a.run-link")
    page.wait_for_url(f"**/runs/result/{run.pk}/")

    # The tree: 200 nodes drawn, the times the page measured recorded.
    page.wait_for_selector("#tree[data-rendered='1']", timeout=10_000)
    render_ms = float(page.get_attribute("#tree", "data-render-ms"))
    total_ms = float(page.get_attribute("#tree", "data-total-ms"))
    print(f"tree of 200 nodes: drawn in {render_ms} ms, {total_ms} ms with the request")
    assert page.get_attribute("#tree", "data-nodes") == "200"
    assert page.locator("#tree circle").count() == 200
    assert page.locator("#best-curve polyline").count() == 1
    shot(page, "run-page-top")

    # Every node has its step as a label; the node's panel is beside the tree, not below.
    assert page.locator("#tree text.node-label").count() == 200
    assert "Click a node" in page.inner_text("#node-detail")
    page.click("#tree circle[data-id='n199']")
    page.wait_for_selector("#node-detail[data-node='n199']")
    tree, panel = page.locator("#tree").bounding_box(), page.locator("#node-detail").bounding_box()
    assert panel["x"] >= tree["x"] + tree["width"] and panel["y"] < tree["y"] + tree["height"]
    assert "print(199)" in page.inner_text("#node-detail .node-code")
    assert "out 199" in page.inner_text("#node-detail .node-output")
    page.locator("#node-detail").scroll_into_view_if_needed()
    shot(page, "run-page-tree-node")

    # The log: the first page, then a search whose hit opens the page at that line.
    page.wait_for_selector("#log-view[data-loaded='logs/run.log']")
    assert page.inner_text("#log-view").startswith("step 0:")
    page.fill("#log-search-q", "needle")
    page.click("#log-search button")
    page.wait_for_selector("#log-hits[data-count='2']")
    assert "line 1235" in page.inner_text("#log-hits")
    page.click("#log-hits li >> nth=0")
    page.wait_for_function(
        "document.getElementById('log-view').textContent.startsWith('step 1234: NEEDLE')"
    )
    # Long lines wrap inside the viewer rather than being cut or scrolled sideways.
    assert page.evaluate("getComputedStyle(document.getElementById('log-view')).whiteSpace") == (
        "pre-wrap"
    )
    page.locator("#logs").scroll_into_view_if_needed()
    shot(page, "run-page-log-search")

    # A code file, highlighted.
    page.click("a.open-code[data-path='code/train.py']")
    page.wait_for_selector("#code-view[data-loaded='code/train.py'] .highlight")
    assert "import" in page.inner_text("#code-view")
    page.locator("#code").scroll_into_view_if_needed()
    shot(page, "run-page-code")
    assert page.console_errors == []


def test_agent_run_page_shows_steps_and_validation_counts(
    page, live_server, media, django_user_model
):
    catalogue_sync()
    owner = django_user_model.objects.create_user("sam", password="pw-sam-123456")
    agent_run = agent_run_with_output(owner)
    sign_in(page, live_server, "sam", "pw-sam-123456")
    page.goto(f"{live_server.url}{agent_run.launch.get_absolute_url()}")
    page.click(f"a[href='/runs/agent/{agent_run.pk}/']")
    page.wait_for_selector("#timeline-events li >> nth=2")
    assert "python train.py" in page.inner_text("#timeline-events")
    assert "answered 3" in page.inner_text("#validation")
    page.wait_for_selector("#log-view[data-loaded='run.log']")
    shot(page, "run-page-agent-timeline")
    assert page.console_errors == []

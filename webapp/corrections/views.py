"""The corrections log's page (``/changes/``) and its Atom feed (``/changes/feed.atom``)."""

from django.contrib.syndication.views import Feed
from django.shortcuts import render
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from webapp.corrections import selectors
from webapp.corrections.models import Kind

FEED_SIZE = 50


def changes_page(request):
    """Newest first, ``?page=`` and ``?kind=``; one it cannot read is a 400 saying what
    would do, a page past the last a 404 saying which is the last."""
    try:
        query = selectors.parse_query(request.GET)
        page = selectors.page_of(request.user, query)
    except (selectors.BadQuery, selectors.PastTheEnd) as exc:
        return render(
            request,
            "corrections/changes.html",
            {"error": str(exc), "kinds": Kind.choices, "kind": ""},
            status=400 if isinstance(exc, selectors.BadQuery) else 404,
        )
    return render(
        request,
        "corrections/changes.html",
        {
            "rows": [selectors.row(entry, request.user) for entry in page.entries],
            "page": page,
            "kinds": Kind.choices,
            "kind": query.kind,
            "kind_label": Kind(query.kind).label if query.kind else "",
        },
    )


class ChangesFeed(Feed):
    """The newest entries a visitor may see (a signed-in reader's own too)."""

    feed_type = Atom1Feed
    title = "mleboard: corrections log"
    subtitle = (
        "Every event that moved a published figure or a competition: re-grades, "
        "disqualifications and their reversals, known issues, leaderboard versions, "
        "published figures and the catalogue."
    )

    def get_object(self, request, *args, **kwargs):
        return request

    def link(self, request):
        return reverse("changes")

    def items(self, request):
        entries = selectors.corrections_visible_to(request.user)[:FEED_SIZE]
        return [selectors.row(entry, request.user) for entry in entries]

    def item_title(self, item):
        return f"{item['kind_label']}: {item['subject']['name']}"

    def item_description(self, item):
        lines = [item["reason"], f"By: {item['who']}."]
        for moved in item["moved"]:
            subset = " (clean subset)" if moved["clean"] else ""
            lines.append(f"{moved['name']}{subset}: Any Medal % " + "; ".join(moved["lines"]))
        return "\n".join(lines)

    def item_link(self, item):
        return f"{reverse('changes')}#change-{item['id']}"

    def item_guid(self, item):
        return f"mleboard-correction-{item['id']}"

    def item_pubdate(self, item):
        return item["time"]

    def item_updateddate(self, item):
        return item["time"]

"""Every route of the site as an address."""


def site_routes(patterns=None, prefix: str = "") -> list[str]:
    """Every route of the site as an address, its parameters filled with values that may
    or may not name a row (1, a word, a uuid)."""
    import re

    from django.urls import URLPattern, URLResolver, get_resolver
    from django.urls.resolvers import RoutePattern

    filled = {"int": "1", "uuid": "00000000-0000-0000-0000-000000000001"}
    out = []
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        if not isinstance(entry.pattern, RoutePattern):
            continue  # the admin's few regular-expression routes have route twins
        route = prefix + re.sub(
            r"<(?:(\w+):)?\w+>", lambda m: filled.get(m.group(1), "x"), str(entry.pattern)
        )
        if isinstance(entry, URLResolver):
            out += site_routes(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            out.append("/" + route)
    return sorted(set(out))

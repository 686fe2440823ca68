"""What the page cache did with a response."""


def state(response) -> str | None:
    """``hit``, ``miss``… as the X-Page-Cache header says, or None without one."""
    return response.headers.get("X-Page-Cache")

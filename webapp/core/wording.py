"""Counted nouns in sentences people read ("1 file", "3 files", "1 already was"), so
that no page or admin message says "1 files"."""


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun`` agreeing in number: counted(1, "file") -> "1 file",
    counted(2, "corpus", "corpora") -> "2 corpora"."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def ago(moment, now=None) -> str:
    """How long ago ``moment`` was, as a sentence ends: "just now" under a minute, else
    Django's "3 minutes ago"; "" for None."""
    from django.utils import timezone
    from django.utils.timesince import timesince

    if moment is None:
        return ""
    now = now or timezone.now()
    if (now - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment, now)} ago"

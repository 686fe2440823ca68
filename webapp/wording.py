"""Counted nouns in sentences people read ("1 file", "3 files", "1 already was"), so
that no page or admin message says "1 files"."""


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun`` agreeing in number: counted(1, "file") -> "1 file",
    counted(2, "corpus", "corpora") -> "2 corpora"."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"

"""Figures as people read them, shared by every report (the terminal reports of replay, advise, explain and read,
and the HTML page)."""

from __future__ import annotations


def human_bytes(n: int) -> str:
    """A byte count as people read it (``48.4 KiB``)."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover

"""Every input line of a replay accounted for: per input, the lines read, those holding filters, those reported as
failures and those known not to be filters (they add up to the lines read), and why an input could not be read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVENTS = "event log"
LOG = "text log"
FILTERS = "filters"


@dataclass
class LineCount:
    """One input's lines: read, holding filters, reported as failures, known not to be filters."""

    source: str
    kind: str
    lines: int = 0
    filters: int = 0
    failed: int = 0
    other: int = 0
    #: why the input (or the rest of it) could not be read
    unreadable: str | None = None

    @property
    def balanced(self) -> bool:
        return self.lines == self.filters + self.failed + self.other

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input": self.source, "kind": self.kind, "lines": self.lines,
                               "filter_lines": self.filters, "failed_lines": self.failed,
                               "other_lines": self.other}
        if self.unreadable:
            out["unreadable"] = self.unreadable
        return out


class Accounts:
    """The :class:`LineCount` of every input of a run, in the order they were met."""

    def __init__(self) -> None:
        self.inputs: dict[str, LineCount] = {}

    def of(self, source: str, kind: str) -> LineCount:
        count = self.inputs.get(source)
        if count is None:
            count = self.inputs[source] = LineCount(source, kind)
        return count

    def unreadable(self, source: str, kind: str, why: str) -> LineCount:
        count = self.of(source, kind)
        count.unreadable = why
        return count

    def totals(self) -> dict[str, int]:
        counts = list(self.inputs.values())
        return {"inputs": len(counts), "inputs_unreadable": sum(1 for c in counts if c.unreadable),
                "lines": sum(c.lines for c in counts), "filter_lines": sum(c.filters for c in counts),
                "failed_lines": sum(c.failed for c in counts), "other_lines": sum(c.other for c in counts)}

    def as_json(self) -> list[dict[str, Any]]:
        return [c.as_json() for c in self.inputs.values()]

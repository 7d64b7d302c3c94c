"""The sarg layer's errors: every one is a ``SargError`` (a ``ValueError``); and the one nesting limit every reader
of filter text shares (:data:`MAX_DEPTH`, :func:`too_deep`): SearchArgument text, HiveQL text, Spark's printed
filters and parquet's printed predicates are all refused past it with the same error, never a RecursionError."""

from __future__ import annotations


class SargError(ValueError):
    """Base of everything the sarg package raises on purpose."""


class SargBuildError(SargError):
    """A builder call Hive's builder would refuse (unbalanced end(), empty IN, wrong literal class...)."""


class SargSyntaxError(SargError):
    """Text that is not a SearchArgument (or HiveQL filter): says where (line, column) and what was expected.

    ``str()`` shows the offending line with a caret under the column.
    """

    def __init__(self, message: str, text: str, pos: int, expected: tuple[str, ...] = ()) -> None:
        self.reason = message
        self.text = text
        self.pos = max(0, min(pos, len(text)))
        self.line = text.count("\n", 0, self.pos) + 1
        line_start = text.rfind("\n", 0, self.pos) + 1
        self.column = self.pos - line_start + 1
        line_end = text.find("\n", self.pos)
        self.source_line = text[line_start: len(text) if line_end < 0 else line_end]
        self.expected = expected
        super().__init__(self._render())

    def _render(self) -> str:
        shown = self.source_line
        col = self.column - 1
        if len(shown) > 100:  # keep long lines readable: a window around the column
            start = max(0, col - 50)
            prefix = "..." if start else ""
            shown = prefix + shown[start:start + 100] + ("..." if start + 100 < len(shown) else "")
            col = col - start + len(prefix)
        msg = f"line {self.line}, column {self.column}: {self.reason}\n  {shown}\n  {' ' * col}^"
        if self.expected:
            msg += f"\nexpected one of: {', '.join(self.expected)}"
        return msg


MAX_DEPTH = 200
"""Most levels a filter may have, its leaves and constants counted (so at most MAX_DEPTH - 1 nested operators).
HiveQL and Spark's filters count an AND in an AND (an OR in an OR) as one level and cancel NOT NOT first."""


def too_deep(text: str, pos: int) -> SargSyntaxError:
    """The error for a filter nested deeper than :data:`MAX_DEPTH` levels, at ``pos`` of ``text``."""
    return SargSyntaxError(f"expression nested deeper than {MAX_DEPTH} levels", text, pos)

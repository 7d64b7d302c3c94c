"""The advice printed: per table, each candidate layout's estimate beside today's, the recommendation with the
Hudi settings to copy, the calibration against the real engine and the notes; or one JSON document."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hive_bridge.advisor.advise import Advice
from hive_bridge.workload.formatting import human_bytes


def print_advice(out: Console, advice: Sequence[Advice]) -> None:
    """Rich tables, one per table, as the rest of the CLI prints."""
    for a in advice:
        spread = "" if a.samples == 1 else f", {a.samples} samples (low-high over samples)"
        t = Table(title=f"Layouts for {a.table}: {a.filters} distinct filters, {a.occurrences} occurrences; "
                        f"sample of {a.sample_rows:,} rows{spread}; files of {human_bytes(a.target_file_bytes)}")
        t.add_column("layout")
        t.add_column("files read", justify="right")
        t.add_column("bytes read", justify="right")
        t.add_column("low - high", justify="right")
        t.add_column("saving", justify="right")
        t.add_column("vs best", justify="right")
        best = a.recommended["layout"] if a.recommended else None
        for c in a.candidates:
            name = c.layout + (" *" if c.layout == best else "")
            t.add_row(escape(name), f"{c.files_read:,.1f}", human_bytes(int(c.bytes_read)),
                      f"{human_bytes(int(c.bytes_low))} - {human_bytes(int(c.bytes_high))}",
                      "-" if c.layout == "today" else f"{c.saving:+.1%}", f"{c.vs_best:.2f}x")
        out.print(t)
        scope = ("" if a.calibration_filters == a.filters else
                 f" ({a.calibration_filters} heaviest filters, {a.calibration_share:.1%} of the runs)")
        out.print(f"today, judged by the engine on the real files{scope}: {a.engine_files_read:,.0f} files, "
                  f"{human_bytes(int(a.engine_bytes_read))} read (simulated: "
                  f"{human_bytes(int(a.simulated_bytes_read))})", highlight=False)
        if a.recommended:
            rec = a.recommended
            out.print(f"[bold]recommended[/bold]: {escape(rec['layout'])}, saving {rec['saving']:.1%} of the bytes "
                      f"read", highlight=False)
            second = rec.get("runner_up")
            if second:
                spread = ("within the estimate's spread: the estimate cannot tell them apart" if second["within_spread"]
                          else "beyond the estimate's spread")
                out.print(f"runner-up: {escape(second['layout'])} reads {second['bytes_vs_best']:.2f}x the bytes of "
                          f"the best ({spread})", highlight=False)
            if rec.get("sql"):
                out.print(f"cluster now (Spark SQL with Hudi's extension; {rec.get('files', 0):,} files written):",
                          highlight=False)
                for statement in rec["sql"]:
                    out.print(f"  {escape(statement)};", highlight=False, soft_wrap=True)  # pasted: never wrapped
                out.print("or with the next write (these writer options cluster the table after it):",
                          highlight=False)
            for key, value in rec["settings"].items():
                out.print(f"  {escape(key)}={escape(value)}", highlight=False, soft_wrap=True)
        else:
            out.print("[bold]recommended[/bold]: keep today's layout", highlight=False)
        for warning in a.warnings:
            out.print(f"[bold yellow]warning[/bold yellow]: {escape(warning)}", highlight=False)
        for note in a.notes:
            out.print(f"note: {escape(note)}", highlight=False)


def write_advice_json(out: IO[str], advice: Sequence[Advice], errors: Sequence[str]) -> None:
    """One JSON document: ``{"advice": [Advice.as_json(), ...], "errors": [...]}``."""
    out.write(json.dumps({"advice": [a.as_json() for a in advice], "errors": list(errors)}, ensure_ascii=False,
                         indent=2) + "\n")


__all__ = ["print_advice", "write_advice_json"]

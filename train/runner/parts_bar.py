"""A progress bar over parts of unequal cost whose time left is measured, not assumed.

A job made of parts (a score card's cells, its exploitability searches, its league) cannot count parts as equal
units: its parts differ tenfold, and an average over the cheap ones promised 0:48 left at half way on a card
that took 2:25. Here each part has a kind and a size (the deals it plays); the time left is the sum, over the
parts still to do, of size × the seconds per unit that the *last finished part of the same kind* took (the
last, so that the first part's compile time does not count twice), or the mean time of a finished part while a
kind has none yet. The bar is in seconds of work — done, and done plus left — so its percentage is of time.
A job should order its parts so that every kind is met early (a score card goes by table size).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    label: str  # what the bar shows while the part runs
    kind: str  # parts of a kind cost alike per unit of size
    size: float  # its units of work (deals, say)
    what: object = None  # what the job needs to play it


class PartsBar:
    """Iterate over ``parts`` (``for part in PartsBar(parts, "score card")``): the bar shows the part running,
    how many are done, the time spent and the time left, measured as the module says. Without tqdm (or with
    ``disable``) it yields the same parts and shows nothing."""

    def __init__(self, parts: Sequence[Part], desc: str, disable: bool = False):
        self.parts, self.desc, self.disable = list(parts), desc, disable
        self.rate: dict[str, float] = {}  # seconds per unit, by kind (its last finished part)
        self.spent: list[float] = []  # seconds of each finished part

    def left(self, todo: Sequence[Part]) -> float | None:
        """Seconds the parts ``todo`` will take, by what the finished ones took (None before any is)."""
        if not self.spent:
            return None
        mean = sum(self.spent) / len(self.spent)
        return sum(part.size * self.rate[part.kind] if part.kind in self.rate else mean for part in todo)

    def __iter__(self) -> Iterator[Part]:
        from .cli import progress_bar

        fmt = "{desc} {percentage:3.0f}%|{bar}| {unit}"  # the unit's place holds the part and the times
        bar = progress_bar(total=1, desc=self.desc, bar_format=fmt, disable=self.disable)
        started = time.perf_counter()
        try:
            for done, part in enumerate(self.parts):
                self._show(bar, done, part, started)
                begun = time.perf_counter()
                yield part
                seconds = time.perf_counter() - begun
                self.spent.append(seconds)
                self.rate[part.kind] = seconds / part.size if part.size > 0 else 0.0
            self._show(bar, len(self.parts), None, started)
        finally:
            bar.close()

    def _show(self, bar, done: int, part: Part | None, started: float) -> None:
        spent = sum(self.spent)
        left = self.left(self.parts[done:])
        elapsed = clock(time.perf_counter() - started)
        if left is None:
            bar.total, bar.n = 1, 0
            when = f"{elapsed} spent"
        else:
            bar.total, bar.n = max(spent + left, 1e-9), spent
            when = f"{elapsed} spent, about {clock(left)} left"
        label = f"{part.label}, " if part is not None else ""
        bar.unit = f"{label}{done}/{len(self.parts)} done [{when}]"  # the postfix's place would start with ", "
        bar.refresh()


def clock(seconds: float) -> str:
    """``seconds`` as tqdm writes a time: m:ss, or h:mm:ss from an hour."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"

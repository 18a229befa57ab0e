"""A progress bar over parts of unequal cost whose time left is measured, not assumed.

A job made of parts (a score card's cells, its exploitability searches, its league; an evaluation's candidates)
cannot count parts as equal units: its parts differ tenfold, and an average over the cheap ones promised 0:48
left at half way on a card that took 2:25. Here each part has a kind and a size (the deals it plays); the time
left is the sum, over the parts still to do, of size × the seconds per unit that the *last finished part of the
same kind* took (the last, so that the first part's compile time does not count twice), or the mean seconds
per unit of the finished parts while a kind has none yet. A part that reports its units as it goes
(:meth:`PartsBar.advance`) is timed by its own rate so far. The bar is in seconds of work — spent, and spent
plus left — so its percentage is of time. So that every kind is met early, the bar plays the parts kind by kind
in turn (:func:`met_early`): a job lists them in its own order and keys what each part gives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    label: str  # what the bar shows while the part runs
    kind: str  # parts of a kind cost alike per unit of size
    size: float  # its units of work (deals, say)
    what: object = None  # what the job needs to play it


def met_early(items: Sequence, kind: Callable) -> list:
    """``items`` kind by kind in turn (the first of each kind in the order kinds first appear, then the second of
    each, ...), so that a measure by kind has every kind after one round."""
    by_kind: dict = {}
    for item in items:
        by_kind.setdefault(kind(item), []).append(item)
    rounds = max(map(len, by_kind.values()), default=0)
    return [group[i] for i in range(rounds) for group in by_kind.values() if i < len(group)]


class PartsBar:
    """Iterate over ``parts`` (``for part in PartsBar(parts, "score card")``, in :func:`met_early`'s order): the bar
    shows how many parts are done, the one running, the time spent and the time left (``[spent<left]``, as tqdm
    writes them), measured as the module says. Parts that run side by side and finish in any order (a league's
    tables on Ray) are reported with :meth:`finished` inside ``with PartsBar(...)``: a part's time is then the time
    since the last one finished, what the side-by-side work takes per part. Without tqdm (or with ``disable``)
    nothing is shown."""

    def __init__(self, parts: Sequence[Part], desc: str, disable: bool = False):
        self.parts, self.desc, self.disable = list(parts), desc, disable
        self.todo = list(self.parts)  # not finished yet, the running one included
        self.rate: dict[str, float] = {}  # seconds per unit, by kind (its last finished part)
        self.spent: list[float] = []  # seconds of each finished part
        self.units = 0.0  # units of finished parts
        self.bar, self.part, self.done, self.started, self.last = None, None, 0.0, 0.0, 0.0
        self.shown = 0.0  # the fraction the bar shows: it never goes back when an estimate grows

    def __enter__(self) -> PartsBar:
        from .cli import progress_bar

        fmt = "{desc} {percentage:3.0f}%|{bar}| {unit}"  # the unit's place holds the part and the times
        self.bar = progress_bar(total=1, desc=self.desc, bar_format=fmt, unit="", disable=self.disable)
        self.started = self.last = time.perf_counter()
        self._show()
        return self

    def __exit__(self, *_) -> None:
        self.part = None
        self._show()
        self.bar.close()

    def __iter__(self) -> Iterator[Part]:
        with self:
            for part in met_early(self.parts, lambda part: part.kind):
                self.part, self.done = part, 0.0
                self._show()
                yield part
                self.finished(part)

    def left(self, todo: Sequence[Part]) -> float | None:
        """Seconds the parts ``todo`` will take, by what the finished ones took (None before any is)."""
        if not self.spent:
            return None
        mean = sum(self.spent) / self.units if self.units > 0 else 0.0
        return sum(part.size * self.rate.get(part.kind, mean) for part in todo)

    def advance(self, units: float) -> None:
        """The running part has done ``units`` more of its size (a part need not report: it is then timed by its
        kind)."""
        self.done += units
        self._show()

    def finished(self, part: Part) -> None:
        """``part`` is done: timed since the last part finished (or the bar opened)."""
        now = time.perf_counter()
        seconds, self.last = now - self.last, now
        self.todo.remove(part)
        self.spent.append(seconds)
        self.units += part.size
        self.rate[part.kind] = seconds / part.size if part.size > 0 else 0.0
        if part is self.part:
            self.part = None
        self._show()

    def _show(self) -> None:
        now, finished = time.perf_counter(), len(self.spent)
        spent = sum(self.spent)
        todo = [part for part in self.todo if part is not self.part]
        left = self.left(todo)
        if self.part is not None:  # the running part: by its own rate once it has reported, else as one to do
            running = now - self.last
            spent += running
            if self.done > 0:
                own = running / self.done * max(self.part.size - self.done, 0.0)
                if left is None:  # the first part: the rest at its rate
                    left = running / self.done * sum(part.size for part in todo)
            else:  # nothing reported yet: its kind's estimate, and unknown ("?") once it has run past it
                estimate = None if left is None else self.left([self.part]) - running
                own = None if estimate is None or estimate <= 0 else estimate
            left = None if own is None else own + (left or 0.0)
        if left is not None:  # a part slower than its kind's estimate grows the time left, not the bar backwards
            self.shown = max(self.shown, spent / max(spent + left, 1e-9))
        self.bar.total, self.bar.n = 1.0, self.shown
        label = f" {self.part.label}" if self.part is not None else ""
        times = f"{clock(now - self.started)}<{'?' if left is None else clock(left)}"  # spent<left, as tqdm's
        self.bar.unit = f"{finished}/{len(self.parts)}{label} [{times}]"  # a postfix would start with ", "
        self.bar.refresh()


def clock(seconds: float) -> str:
    """``seconds`` as tqdm writes a time: m:ss, or h:mm:ss from an hour."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"

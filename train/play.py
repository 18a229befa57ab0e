"""Play Snip Snap Snorem in the terminal against any agents (most_copies by default; the shipped models by
name: ppo, ppo_distilled), or watch them play; record a deal.

    python -m train.play --seat 0 --players 4 --opponents most_copies ppo   # you hold seat 0
    python -m train.play --players 6 --rules parlett                       # watch a deal
    python -m train.play --players 4 --opponents pimc ppo --record deal.gif  # watch it and record it

Only leads are choices (every follow is forced and played for you); type the rank to lead (A, 2..10, J,
Q, K). The terminal shows what happened since the last lead, in colour, and the table before each lead.
``--record`` writes every turn as a picture of the table (the env's ``rgb_array``) to a GIF, or to an MP4
where ``imageio`` with ffmpeg is installed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

try:
    from rich.console import Console
    from rich.markup import escape
except ImportError:  # the flags and --help work without rich (the train extra); playing says what to install
    Console = escape = None

import snipsnap_env
from snipsnap_env.cards import RANK_NAMES, card_name
from snipsnap_env.events import Event, Tone
from snipsnap_env.picture import table_image
from snipsnap_env.render import open_set_text
from snipsnap_env.rules import MAX_PLAYERS

from .measure.candidates import made, make_candidate
from .runner.cli import add_flag, add_table_flags, between, new_parser, require
from .runner.job import Job, Plan, Refusal
from .runner.single_file import check_new_file, write_new_file

STYLES = {  # by tone (snipsnap_env.events.Tone): a new kind of event is styled by its tone
    Tone.TABLE: "bold",
    Tone.LEAD: "bold cyan",
    Tone.PLAY: "default",
    Tone.QUIET: "dim",
    Tone.COST: "red",
    Tone.WIN: "green",
}
FRAME_MS = 600  # per turn in a recording; the last frame stays 4 s


def ask_lead(mask, prompt=input) -> int:
    """Ask the person for a rank among the legal ones until they give one."""
    legal = [RANK_NAMES[a] for a in range(13) if mask[a]]
    while True:
        try:
            answer = prompt(f"your lead ({' '.join(legal)}): ").strip().upper()
        except EOFError:  # the input ended (Ctrl-D, a closed pipe): stop the deal, without a traceback
            raise SystemExit("\nend of input: the deal is left unfinished") from None
        if answer in legal:
            return RANK_NAMES.index(answer)
        print(f"{answer!r} is not a rank you can lead; choose one of {' '.join(legal)}")


def event_line(event: Event) -> str:
    """One event as rich markup: leads bold, calls in yellow, penalties red, the winner green."""
    text = escape(str(event))
    if event.call:
        text = text.replace(escape(event.call), f"[yellow]{escape(event.call)}[/]")
    return f"[{STYLES[event.kind.tone]}]{text}[/]"


def table_summary(match, viewer: int | None) -> str:
    """The table before a lead, as rich markup: the open set, every seat's cards and chips, the pot, a hand."""
    deal = match.deal
    unit = "chips" if match.rules.chips else "points"
    seats = []
    for seat in range(match.num_players):
        name = f"player_{seat}" + (" (you)" if seat == viewer else "") + (" D" if seat == deal.dealer else "")
        style = "bold yellow" if seat == deal.to_act and not deal.over else "default"
        cards = f"{deal.hand_size[seat]} card" + ("" if deal.hand_size[seat] == 1 else "s")
        seats.append(f"[{style}]{name}: {cards}, {match.score[seat]:g} {unit}[/]")
    lines = [escape(open_set_text(match)), "  ·  ".join(seats)]
    if match.rules.chips:
        lines.append(f"pot: {deal.pot}")
    if viewer is not None and not deal.over:
        lines.append("your hand: [bold]" + " ".join(map(card_name, deal.hand(viewer))) + "[/]")
    return "\n".join(lines)


class Recorder:
    """Frames of a deal, saved as a GIF (Pillow) or an MP4 (imageio with ffmpeg)."""

    def __init__(self, path: str, overwrite: bool = False):
        self.path, self.overwrite = Path(path), overwrite
        if self.path.suffix.lower() not in (".gif", ".mp4"):
            raise ValueError(f"--record {path}: write a .gif or an .mp4 file")
        if self.path.suffix.lower() == ".mp4":
            try:
                import imageio.v3  # noqa: F401
                import imageio_ffmpeg  # noqa: F401
            except ImportError:
                raise ValueError("--record *.mp4 needs imageio with ffmpeg: pip install 'imageio[ffmpeg]'") from None
        if not self.path.parent.is_dir():
            raise ValueError(f"--record {path}: folder {self.path.parent} does not exist")
        check_new_file(self.path, "--record", overwrite)  # no link, no tracked file, an existing one by --overwrite
        self.frames: list[np.ndarray] = []

    def add(self, frame: np.ndarray) -> None:
        self.frames.append(frame)

    def save(self) -> Path:
        """The recording, written whole into its file (checked again: something may have appeared meanwhile)."""
        return write_new_file(self.path, "--record", self._write, self.overwrite)

    def _write(self, path: Path) -> None:
        if self.path.suffix.lower() == ".mp4":
            import imageio.v3 as iio

            iio.imwrite(path, np.stack(self.frames), fps=1000 / FRAME_MS, codec="libx264")
            return
        from PIL import Image

        # one small palette for every frame (the table has few colours): a GIF a fraction of the size
        palette = Image.fromarray(np.concatenate(self.frames[:: max(len(self.frames) // 8, 1)])).quantize(64)
        images = [Image.fromarray(frame).quantize(palette=palette, dither=Image.Dither.NONE) for frame in self.frames]
        durations = [FRAME_MS] * (len(images) - 1) + [4000]
        images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0, optimize=True)


def play(
    players: int,
    rules: str,
    opponents: list[str],
    seat: int | None,
    seed: int,
    prompt=input,
    record: str | None = None,
    console: Console | None = None,
    trust: bool = False,
    overwrite: bool = False,
) -> dict:
    """Play (or watch) one deal; return the chips."""
    console = console or Console(highlight=False)
    recorder = Recorder(record, overwrite) if record else None
    env = snipsnap_env.env(num_players=players, rules=rules, auto_forced=seat is not None, viewer=seat)
    env.reset(seed=seed)
    raw = env.unwrapped
    match = raw.match
    policies = {
        agent: make_candidate(opponents[i % len(opponents)], seed + i, trust_model=trust)
        for i, agent in enumerate(env.agents)
    }

    def after_turn(events) -> None:
        for event in events:
            console.print(event_line(event))
        if recorder is not None:
            recorder.add(table_image(match, seat, events))

    after_turn(match.deal.events)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if match.deal.is_lead:  # the table, once per set: what a player looks at before leading
            console.print()
            console.print(table_summary(match, seat))
        if seat is not None and agent == f"player_{seat}":
            action = ask_lead(obs["action_mask"], prompt)
        else:
            action = policies[agent](obs)
        env.step(action)
        after_turn(raw.last_events)
    console.print()
    console.print(table_summary(match, seat))
    if recorder is not None:
        console.print(f"recorded {len(recorder.frames)} frames to {recorder.save()}")
    return match.chips


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__, "train.play")
    add_table_flags(job, players=4)
    add_flag(job, "opponents", default=["most_copies"], help="agent names, seat by seat in turn")
    job.add_argument(
        "--seat", type=between(0, MAX_PLAYERS - 1), default=None, help="your seat; leave out to watch the agents"
    )
    job.add_argument(
        "--record", metavar="FILE", help="record the deal: a .gif, or an .mp4 (needs imageio[ffmpeg]); a new file"
    )
    job.add_argument(
        "--overwrite", action="store_true", help="--record may replace an existing file (never a tracked one)"
    )
    add_flag(job, "trust-model")
    return job


def check(args) -> Plan:
    """The seat at the table, rich there, every opponent made (names, model files), the recording's file."""
    if args.seat is not None and not 0 <= args.seat < args.players:
        raise Refusal(f"--seat got {args.seat}; allowed: a seat from 0 to {args.players - 1}")
    if Console is None:
        require("train", "rich")
    made(args.opponents, args.trust_model)
    if args.record:
        Recorder(args.record, args.overwrite)
    return Plan(lambda _: play(args.players, args.rules, args.opponents, args.seat, args.seed, record=args.record,
                               trust=args.trust_model, overwrite=args.overwrite))  # fmt: skip


JOB = Job(parser, check, example=("--players", "3"), writes=("record",), agents=("opponents",))
main = JOB.main


if __name__ == "__main__":
    main()

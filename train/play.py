"""Play Snip Snap Snorem in the terminal against the shipped agents, or watch them play.

    python -m train.play --seat 0 --players 4 --opponents most_copies ppo   # you hold seat 0
    python -m train.play --players 6 --rules parlett                       # watch a deal

Only leads are choices (every follow is forced and played for you); type the rank to lead (A, 2..10, J,
Q, K). The table is printed after every turn.
"""

from __future__ import annotations

import argparse

import agents
import snipsnap_env
from snipsnap_env.cards import RANK_NAMES
from snipsnap_env.render import table_text

from .cli import add_flag, add_table_flags, new_parser


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


def play(players: int, rules: str, opponents: list[str], seat: int | None, seed: int, prompt=input) -> dict:
    """Play (or watch) one deal; return the chips."""
    env = snipsnap_env.env(num_players=players, rules=rules, render_mode="ansi", auto_forced=seat is not None)
    env.reset(seed=seed)
    match = env.unwrapped.match

    def show() -> None:  # a person at the table sees only their own hand
        print(env.render() if seat is None else table_text(match, env.unwrapped.last_events, viewer=seat))

    policies = {agent: agents.make(opponents[i % len(opponents)], seed=seed + i) for i, agent in enumerate(env.agents)}
    show()
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if seat is not None and agent == f"player_{seat}":
            env.step(ask_lead(obs["action_mask"], prompt))
        else:
            env.step(policies[agent](obs))
        print()
        show()
    return match.chips


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__)
    add_table_flags(job, players=4)
    add_flag(job, "opponents", default=["most_copies"], help="agent names, seat by seat in turn")
    job.add_argument("--seat", type=int, default=None, help="your seat; leave out to watch the agents")
    return job


def main(argv=None) -> dict:
    job = parser()
    args = job.parse_args(argv)
    if args.seat is not None and not 0 <= args.seat < args.players:
        job.error(f"--seat got {args.seat}; allowed: a seat from 0 to {args.players - 1}")
    try:
        return play(args.players, args.rules, args.opponents, args.seat, args.seed)
    except ValueError as error:  # unknown agent names, table sizes
        job.error(str(error))


if __name__ == "__main__":
    main()

"""OpenSpiel's ISMCTS bot (information-set MCTS, which avoids PIMC's strategy fusion) on snipsnap, against the
project's search player and most_copies, on paired deals through the OpenSpiel game (``python_snipsnap``).

    python -m train.ismcts --players 3 4 6 --deals 300 --simulations 200
    python -m train.ismcts --players 4 --deals 40 --simulations 50 --candidates ismcts most_copies   # a quick look

Each candidate plays the same deals in the same seat (rotated round the table) against ``--opponents``
players; every one's paired gain over most_copies in that seat is reported with its 95% CI, and the seconds a
candidate spends per real choice (a lead with more than one legal rank; forced turns are played for it).

- ``ismcts``: OpenSpiel's ``ISMCTSBot`` as OpenSpiel ships it, with its random-rollout evaluator.
- ``ismcts_mc``: the same bot, its rollouts led by most_copies players (the model the search player uses).
- ``pimc:<worlds>``: the project's search player (agents.pimc); ``most_copies`` and any agents.make name.

Needs ``pip install -e ".[recipes]"`` (open-spiel).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import agents
from snipsnap_env.engine import NUM_ACTIONS

from .measure.candidates import made, make_candidate
from .measure.paired import PairedDeals, summarise
from .runner.cli import (
    MAX_SIMULATIONS,
    add_flag,
    add_job_flags,
    between,
    new_parser,
    progress_bar,
    refuse_repeats,
    require,
)
from .runner.job import Job, Plan

BOTS = ("ismcts", "ismcts_mc")  # OpenSpiel's bot with random rollouts, and with most_copies rollouts
UCT_C = 10.0  # a deal's chips spread over about ±10: the exploration term on the returns' own scale


class MostCopiesRollouts:
    """An ISMCTS evaluator: a state's value is one play-out with most_copies leading for every seat."""

    def __init__(self, seed: int):
        self.policy = agents.make("most_copies", seed=seed)

    def evaluate(self, state):
        state = state.clone()
        while not state.is_terminal():
            state.apply_action(choose(self.policy, state))
        return np.array(state.returns())

    def prior(self, state):
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


def choose(policy, state) -> int:
    """``policy``'s action at ``state`` (an agents.Policy on the env's observation); a forced turn is played."""
    legal = state.legal_actions()
    if len(legal) == 1:
        return legal[0]
    mask = np.zeros(NUM_ACTIONS, np.int8)
    mask[legal] = 1
    return policy({"observation": np.asarray(state.observation_tensor(), np.float32), "action_mask": mask})


def make_bot(name: str, game, simulations: int, seed: int):
    import pyspiel  # noqa: F401  (the bot needs the game registered)
    from open_spiel.python.algorithms import ismcts, mcts

    rng = np.random.RandomState(seed % 2**32)  # OpenSpiel's bots take numpy's legacy generator: 32-bit seeds
    if name == "ismcts":
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    else:
        evaluator = MostCopiesRollouts(seed)
    bot = ismcts.ISMCTSBot(game, evaluator, UCT_C, simulations, random_state=rng)
    # OpenSpiel's default resampler draws from an unseeded sampler: draw the worlds from the bot's own stream,
    # so that a seed gives the same play every time
    worlds = np.random.RandomState((seed + 1) % 2**32)
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, worlds.uniform))
    return bot


def play_candidate(
    name, deals, players: int, rules: str, opponent: str, simulations: int, seed: int, progress=True, trust=False
):
    """The candidate's chips in every deal and its seconds per real choice."""
    import pyspiel

    from snipsnap_env.openspiel_game import pack_for

    game = pyspiel.load_game("python_snipsnap", {"players": players, "rules": rules})
    chips, thinking, choices = np.zeros(len(deals.seats)), 0.0, 0
    for d in progress_bar(
        range(len(deals.seats)), desc=f"{name}, {players} players", unit="deal", disable=not progress
    ):
        seat = int(deals.seats[d])
        # the same in every run
        opponents = [make_candidate(opponent, seed + 1000 * d + s, trust_model=trust) for s in range(players)]
        bot = make_bot(name, game, simulations, seed + d) if name in BOTS else None
        candidate = None if bot else make_candidate(name, seed + d, (opponent,), trust)
        state = game.new_initial_state()
        state.apply_action(int(deals.dealers[d]))
        hands = [np.flatnonzero(deals.owners[d] == s).tolist() for s in range(players)]
        for card in pack_for(hands, int(deals.dealers[d])):
            state.apply_action(card)
        while not state.is_terminal():
            player = state.current_player()
            if player != seat:
                state.apply_action(choose(opponents[player], state))
                continue
            started = time.perf_counter()
            if len(state.legal_actions()) == 1:
                action = state.legal_actions()[0]
            else:
                action = bot.step(state) if bot else choose(candidate, state)
                thinking, choices = thinking + time.perf_counter() - started, choices + 1
            state.apply_action(action)
        chips[d] = state.returns()[seat]
    return chips, thinking / max(choices, 1)


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    add_flag(job, "players", nargs="+", default=[3, 4, 6], help="table sizes, 3..8")
    job.add_argument("--candidates", nargs="+", default=["most_copies", "pimc:128", "ismcts", "ismcts_mc"])
    job.add_argument("--opponents", default="most_copies", help="the policy in every other seat")
    add_flag(job, "rules")
    add_flag(job, "deals", default=300)
    job.add_argument(
        "--simulations", type=between(1, MAX_SIMULATIONS), default=200, help="ISMCTS simulations per choice"
    )
    add_flag(job, "seed", default=31)
    add_job_flags(job, "ismcts.md/.json")
    return job


def check(args) -> Plan:
    """OpenSpiel there, every candidate known (``ismcts``, ``ismcts_mc`` or an agent), the opponent too."""
    if "most_copies" not in args.candidates:
        args.candidates = ["most_copies", *args.candidates]
    refuse_repeats("players", args.players)
    refuse_repeats("candidates", args.candidates)
    require("recipes", "pyspiel")
    import snipsnap_env.openspiel_game  # noqa: F401  (registers the game)

    made([name for name in args.candidates if name not in BOTS], args.trust_model)
    made([args.opponents], args.trust_model)
    settings = {key: getattr(args, key) for key in ("players", "candidates", "opponents", "rules", "deals")}
    settings |= {"simulations": args.simulations, "seed": args.seed, "uct_c": UCT_C}
    return Plan(lambda folder: run_tables(args, folder), settings, args.out, args.overwrite)


def run_tables(args, folder) -> list[dict]:
    """Every candidate at every table size; ismcts.md and .json (the seconds per choice go to provenance.json:
    the tables are the same bytes for a seed, wall time is not)."""
    records = []
    for players in args.players:
        deals = PairedDeals.draw(args.deals, players, 1, args.seed + players, args.rules)
        results, seconds = {}, {}
        for name in args.candidates:
            results[name], seconds[name] = play_candidate(
                name, deals, players, args.rules, args.opponents, args.simulations, args.seed, args.progress,
                args.trust_model,
            )  # fmt: skip
            folder.timings[f"{name}, {players} players: seconds per choice"] = round(seconds[name], 5)
        for row in summarise(results, "most_copies"):
            records.append({"players": players, **row.record()})
            print(f"{players} players | {row.name} | gain over most_copies {row.diff_vs_reference:+.2f} "
                  f"± {row.diff_ci95:.2f} | {seconds[row.name] * 1000:.1f} ms a choice", flush=True)  # fmt: skip
    lines = [
        f"{args.deals} paired deals per table size against {args.opponents} players, rules {args.rules}, "
        f"ISMCTS {args.simulations} simulations per choice (uct_c {UCT_C}), seed {args.seed}; the seconds each "
        "candidate took per choice are in provenance.json",
        "",
        "| players | candidate | gain over most_copies (95% CI) | chips per deal |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['players']} | {r['name']} | {r['diff_vs_reference']:+.2f} ± {r['diff_ci95']:.2f} | "
        f"{r['chips_per_deal']:+.2f} |"
        for r in records
    ]
    folder.write(folder.path / "ismcts.md", lambda p: p.write_text("\n".join(lines) + "\n"))
    folder.write(folder.path / "ismcts.json", lambda p: p.write_text(json.dumps(records, indent=1)))
    print(f"results written to {folder.path}")
    return records


JOB = Job(
    parser,
    check,
    example=("--players", "3", "--deals", "4", "--simulations", "4", "--candidates", "ismcts"),
    agents=("candidates", "opponents"),
)
main = JOB.main


if __name__ == "__main__":
    main()

"""Where a learned lead falls short of what its own training critic already knows.

    pip install -e ".[train]"
    python examples/lead_regret.py --model ppo:agents/models/ppo_scratch_scarne.zip --rules scarne:ranks=4 --players 3

The default recipe's critic (``train_ppo --critic rollouts``) values every legal lead in the true deal, the
learner's later leads played by most_copies. This plays the model greedily at a table of random-lead players and,
at each of its lead choices, asks that critic for every legal lead's value (``--rollouts`` rollouts each). Leads
made from the same observation are pooled: the best lead is picked from one half of their values and scored on
the other half (so the noise of a few values does not pass for a better lead). It prints the value the model's
greedy lead leaves per deal against that best lead, and, where it leaves more than ``--margin`` chips, the model's
own probability of the better lead: a signal the critic gives and the actor does not follow (docs/results.md,
"Why the default recipe stops short"). On a deck of 52 cards nearly every observation is new, so the pooling needs
a small deck (``scarne:ranks=K``) to say anything.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np

import agents
from snipsnap_env.observation import CHIP_SCALE, OBS_DIM
from snipsnap_env.vec_env import SnipSnapVecEnv
from train.runner.cli import game_count, non_negative_float, players, rollout_count, rules_spec, seed_value

IS_LEAD = 52  # the observation's is_lead column (docs/environment.md)


def lead_choices(model, rules: str, players: int, games: int, steps: int, rollouts: int, seed: int):
    """The model's lead choices with more than one legal lead, pooled by observation: per observation its legal
    ranks, the model's greedy lead and probabilities, and the critic's values of every lead (one row per visit);
    and the deals finished."""
    opponents = [agents.make("random", seed=seed + 1)]
    env = SnipSnapVecEnv(games, players, rules=rules, opponents=opponents, seed=seed, lead_values=rollouts)
    seen, deals = defaultdict(list), 0
    observations = env.reset()
    for _ in range(steps):
        masks = env.action_masks()
        obs, values = observations[:, :OBS_DIM], observations[:, OBS_DIM : OBS_DIM + 13] * CHIP_SCALE
        actions = model.act_batch(obs, masks)
        probabilities = model.probabilities(obs, masks)
        for i in np.flatnonzero((obs[:, IS_LEAD] == 1) & (masks[:, :13].sum(axis=1) > 1)):
            seen[obs[i].tobytes()].append((masks[i, :13].astype(bool), actions[i], probabilities[i, :13], values[i]))
        observations, _, dones, _ = env.step(actions)
        deals += int(dones.sum())
    return seen, deals


def shortfall(seen: dict, margin: float, seed: int) -> tuple[float, list[tuple[int, float, float]]]:
    """Chips the greedy lead leaves against the best lead (picked on one half of an observation's visits, scored
    on the other), summed over visits; and per observation where it leaves more than ``margin``: (visits, chips
    left per visit, the model's probability of the better lead)."""
    rng = np.random.default_rng(seed)
    total, short = 0.0, []
    for visits in seen.values():
        if len(visits) < 4:  # two values a half at least
            continue
        legal, greedy, probabilities = visits[0][:3]  # the same observation: the same legal leads and choice
        values = np.array([visit[3] for visit in visits])
        order = rng.permutation(len(visits))
        pick, score = order[: len(order) // 2], order[len(order) // 2 :]
        best = np.flatnonzero(legal)[np.argmax(values[pick][:, legal].mean(axis=0))]
        gap = float(values[score, best].mean() - values[score, greedy].mean())
        total += gap * len(visits)
        if gap > margin:
            short.append((len(visits), gap, float(probabilities[best])))
    return total, short


def main(argv=None) -> tuple[float, list]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="ppo", help="a learned agent's name or ppo:<model file>")
    parser.add_argument("--rules", default="scarne:ranks=4", type=rules_spec)
    parser.add_argument("--players", default=3, type=players)
    parser.add_argument("--games", default=8192, type=game_count, help="games played at once")
    parser.add_argument("--steps", default=40, type=game_count, help="the model's decisions in each game")
    parser.add_argument("--rollouts", default=32, type=rollout_count, help="rollouts per lead and position")
    parser.add_argument("--margin", default=0.2, type=non_negative_float, help="chips: where a shortfall counts")
    parser.add_argument("--seed", default=5, type=seed_value)
    args = parser.parse_args(argv)
    name, _, path = args.model.partition(":")
    if name not in agents.learned() or (path and name != "ppo"):
        parser.error(f"--model got {args.model!r}: a learned agent's name ({', '.join(agents.learned())}) or "
                     "ppo:<model file>")  # fmt: skip
    try:
        model = agents.make(name, **({"path": path} if path else {}))
    except (OSError, ValueError) as error:
        parser.error(f"--model {args.model}: {error}")
    seen, deals = lead_choices(model, args.rules, args.players, args.games, args.steps, args.rollouts, args.seed)
    total, short = shortfall(seen, args.margin, args.seed)
    visits = sum(map(len, seen.values()))
    print(f"{args.model}, {args.rules}, {args.players} players: {visits:,} lead choices from {len(seen):,} "
          f"observations in {deals:,} deals")  # fmt: skip
    print(f"chips per deal the greedy lead leaves against the critic's best lead: {total / max(deals, 1):+.4f}")
    if short:
        share = np.array([probability for *_, probability in short])
        print(f"observations where it leaves more than {args.margin} chips: {len(short):,} "
              f"({sum(v for v, *_ in short):,} lead choices); the model's probability of the better lead there: "
              f"median {np.median(share):.1e}, {np.mean(share < 1e-3):.0%} below 1e-3")  # fmt: skip
    return total / max(deals, 1), short


if __name__ == "__main__":
    main()

"""Play one deal with random legal moves and print the table after every turn.

python -m train.demo --players 4 --rules parlett --seed 7
"""

from __future__ import annotations

import argparse

import numpy as np

import snipsnap_env
from snipsnap_env.rules import PRESETS


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=6, help="3..8")
    parser.add_argument("--rules", default="scarne", choices=sorted(PRESETS))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = snipsnap_env.env(num_players=args.players, rules=args.rules, render_mode="ansi")
    env.reset(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(env.render())
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        print("\n" + env.render())


if __name__ == "__main__":
    main()

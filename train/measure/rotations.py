"""Mixed tables played on paired deals: every seat rotation of each deal, in an order round the table drawn per deal."""

from __future__ import annotations

import numpy as np

from snipsnap_env.batch import BatchEnv

from ..runner.cli import progress_bar
from .candidates import make_candidate
from .paired import PairedDeals, mean_ci

CHUNK = 65_536  # deals played side by side: memory stays bounded for any --deals


def play_mixed(
    specs: list[str],
    num_players: int,
    rules: str,
    deals: int,
    seed: int,
    trust_model: bool = False,
    progress: bool = False,
) -> dict:
    """Each deal played ``num_players`` times, the agents in an order drawn for the deal and rotated a seat on
    each time (the seats beyond the agents given are filled with the last one); per agent its chips per deal."""
    if len(specs) > num_players:
        raise ValueError(f"{len(specs)} agents for a table of {num_players}")
    seats = list(specs) + [specs[-1]] * (num_players - len(specs))
    policies = [make_candidate(spec, seed + i, trust_model=trust_model) for i, spec in enumerate(seats)]
    order = arrangements(deals, num_players, seed)
    paired = PairedDeals.draw(deals, num_players, 1, seed, rules)
    chips = play_rotations(policies, paired, rules, seed, progress, order)
    table = {}
    for name in dict.fromkeys(seats):
        rows = chips[[i for i, spec in enumerate(seats) if spec == name]].mean(axis=0)
        mean, ci = mean_ci(rows)
        table[name] = {"seats": seats.count(name), "chips_per_deal": mean, "ci95": ci}
    return table


def arrangements(num_deals: int, num_players: int, seed: int) -> np.ndarray:
    """(D, N): each deal's order of the policies round the table, a uniform permutation per deal.

    Who sits after whom matters in this game (a seat follows the one on its right): at the 2026-12-03 league's
    4-player tables `ppo` made 3.4 chips a deal less than the distilled model with it sitting right after the
    distilled model, and 2.2 more the other way round. Rotating the seats keeps that order, so a table played in
    one order carries its order's luck into every deal, and two tables of the same agents differed by 2 chips a
    deal; drawn afresh for every deal, the order is one more luck of the deal, which the deals average out."""
    rng = np.random.default_rng([seed, 0x0DE5])
    return rng.permuted(np.tile(np.arange(num_players), (num_deals, 1)), axis=1)


def play_rotations(
    policies: list, paired: PairedDeals, rules: str, seed: int, progress: bool = True, order: np.ndarray | None = None
) -> np.ndarray:
    """(N, D): the chips of ``policies[i]`` in each of the deals ``paired`` draws, averaged over the N
    rotations of the seats: in deal ``d`` the policies sit round the table in the order ``order[d]`` (default:
    as given), and rotation ``r`` moves each one ``r`` seats on, so every policy plays every seat's hand."""
    deals, num_players = paired.opponent_index.shape
    order = np.tile(np.arange(num_players), (deals, 1)) if order is None else np.asarray(order)
    chips = np.zeros((num_players, deals))
    bar = progress_bar(total=deals * num_players, desc="deals × seat rotations", unit="deal", disable=not progress)
    for start in range(0, deals, CHUNK):  # a chunk of games at a time: a game in play takes several kB
        part = slice(start, min(start + CHUNK, deals))
        chips[:, part] = _play_chunk(policies, paired.owners[part], paired.dealers[part], rules, seed, order[part], bar)
    bar.close()
    return chips


def _play_chunk(policies, owners, dealers, rules: str, seed: int, order: np.ndarray, bar) -> np.ndarray:
    """:func:`play_rotations` of the deals ``owners``/``dealers`` (a chunk), played side by side."""
    deals, num_players = order.shape
    chips = np.zeros((num_players, deals))
    rows = np.arange(deals)
    for rotation in range(num_players):
        env = BatchEnv(deals, num_players, rules=rules, seed=seed)
        obs, mask = env.reset(owners=owners, dealers=dealers)
        sitting = order[:, (np.arange(num_players) - rotation) % num_players]  # (D, N): who sits in each seat
        finished = np.zeros(deals, bool)
        while not finished.all():
            actions = np.zeros(deals, np.int64)
            who = sitting[rows, env.to_act]
            for index, policy in enumerate(policies):
                acting = np.flatnonzero(~finished & (who == index))
                if acting.size:
                    actions[acting] = policy.act_batch(obs[acting], mask[acting])
            obs, mask, _, dones, infos = env.step(actions, active=~finished)
            ended = np.flatnonzero(dones & ~finished)
            for seat in range(num_players):
                chips[sitting[ended, seat], ended] += infos["deal_score"][ended, seat] / num_players
            finished[ended] = True
        bar.update(deals)
    return chips

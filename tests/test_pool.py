"""The training pool: tables of one kind or mixed, what the learner gains at each member's games, prioritised
fictitious self-play weights, and a run that seats models, snapshots and itself (train.learn.pool)."""

from __future__ import annotations

import numpy as np
import pytest

import agents

pytest.importorskip("stable_baselines3")

from snipsnap_env.observation import OBS_DIM  # noqa: E402
from snipsnap_env.vec_env import SnipSnapVecEnv  # noqa: E402
from train.learn.pool import Priorities  # noqa: E402


def opponent_members(env):
    """Each game's pool members at the seats the learner does not hold."""
    return [set(env._seat_policy[b][~env._learns[b]].tolist()) for b in range(env.num_envs)]


@pytest.mark.parametrize("pure, kinds", [(1.0, {1}), (0.0, {1, 2})])
def test_pure_tables_seat_one_member_at_every_opponent_seat(pure, kinds):
    pool = [agents.make("random"), agents.make("most_copies")]
    env = SnipSnapVecEnv(400, 5, opponents=pool, seed=3, pure=pure)
    env.reset()
    sizes = {len(members) for members in opponent_members(env)}
    assert sizes == kinds
    with pytest.raises(ValueError, match="pure got 1.5"):
        SnipSnapVecEnv(4, 3, opponents=pool, pure=1.5)


def test_the_gains_booked_are_the_lead_values_difference_to_most_copies_lead():
    pool = [agents.make("random"), agents.make("most_copies")]
    env = SnipSnapVecEnv(256, 3, opponents=pool, seed=5, lead_values=8, pure=1.0)
    obs = env.reset()
    for mode in ("most_copies", "values"):
        env.gains[:], env.gain_counts[:] = 0.0, 0.0
        for _ in range(20):
            legal = env.action_masks()[:, :13]
            score = obs[:, OBS_DIM:] if mode == "values" else obs[:, :13]
            obs, *_ = env.step(np.where(legal, score, -np.inf).argmax(axis=1))
        assert (env.gain_counts > 0).all()
        gain = env.gains / env.gain_counts
        if mode == "most_copies":  # most_copies' own lead gains nothing over itself
            np.testing.assert_allclose(gain, 0.0, atol=1e-9)
        else:  # the best lead by the values gains at every kind of table
            assert (gain > 0.5).all(), gain


class FakeTable:
    def __init__(self, gains, counts):
        self.gains, self.gain_counts = np.array(gains, float), np.array(counts, float)
        self.weights = np.full(len(gains), 1 / len(gains))
        self.running_gains = None


def test_prioritised_self_play_meets_most_the_members_the_learner_gains_least_against_at_each_table():
    tables = [FakeTable([4.0, 0.0, 2.0], [10, 10, 1]), FakeTable([0.0, 4.0, 0.0], [10, 10, 0])]
    priorities = Priorities(temperature=1.0, floor=0.1)
    small, big = priorities.update(tables)
    np.testing.assert_allclose(tables[0].running_gains, [0.4, 0.0, 2.0])  # booked sums over booked counts
    np.testing.assert_allclose(tables[1].running_gains, [0.0, 0.4, np.nan])
    for weights in (small, big):
        assert weights.sum() == pytest.approx(1.0) and weights.min() >= 0.1 / 3
    assert small[1] > small[0] > small[2]  # each table by its own gains
    assert big[2] == big.max() and big[0] > big[1]  # never met yet: counted as the hardest
    assert all(np.array_equal(t.weights, w) for t, w in zip(tables, (small, big)))
    assert all((t.gains == 0).all() and (t.gain_counts == 0).all() for t in tables)  # booked once
    assert all(np.array_equal(w, v) for w, v in zip(priorities.update(tables), (small, big)))  # nothing new
    tables[0].gains[:], tables[0].gain_counts[:] = [0.0, 10.0, 0.0], [1, 1, 0]
    later = priorities.update(tables)[0]
    assert tables[0].running_gains[1] == pytest.approx(0.8 * 0.0 + 0.2 * 10.0)  # running: the old gain remembered
    assert later[1] < small[1]


@pytest.mark.training
@pytest.mark.slow
def test_a_run_seats_a_model_snapshots_and_itself_and_rolls_its_own_play_out(tmp_path):
    pytest.importorskip("sb3_contrib")
    import csv

    from train import train_ppo

    train_ppo.main(
        ["--players", "3", "--ppo-players", "3", "4", "--opponents", "most_copies", "ppo", "self", "snapshot",
         "--rollout-policy", "self", "--pure-tables", "0.5", "--pfsp", "1", "--total-timesteps", "6000",
         "--num-envs", "32", "--n-steps", "16", "--snapshot-every", "1000", "--critic-rollouts", "2",
         "--eval-every", "3000", "--eval-deals", "200", "--checkpoint-every", "3000", "--runs", str(tmp_path),
         "--run-name", "pool", "--no-progress", "--threads", "1"]
    )  # fmt: skip
    rows = list(csv.DictReader(open(tmp_path / "pool" / "progress.csv")))
    weights = [float(rows[-1][f"pool/3p_weight_{name}"]) for name in ("most_copies", "ppo", "self", "snapshot")]
    assert sum(weights) == pytest.approx(1.0) and min(weights) > 0
    from agents.model_file import load_policy

    _, meta = load_policy(tmp_path / "pool" / "final_model.zip")
    training = meta["training"]  # how it was trained, with the command that trains it again
    assert training["algorithm"] == "ppo" and training["settings"]["rollout_policy"] == "self"
    command = training["command"]
    assert command.startswith("python -m train.train_ppo ") and "--rollout-policy self" in command
    assert "--opponents most_copies ppo self snapshot" in command and "--runs" not in command
    again = train_ppo.parser().parse_args(command.split()[3:])  # the command parses back to the same settings
    assert again.pfsp == 1.0 and again.ppo_players == [3, 4] and again.total_timesteps == 6000


def test_a_member_whose_networks_come_later_is_seated_once_it_has_them():
    """Snapshots are taken after the env is built: the table reads a member's networks at its first reset."""
    from snipsnap_env.kernel_network import NETWORK, stack

    class Growing(agents.Policy):  # like train.learn.snapshots.Snapshots
        name = "growing"

        def __init__(self):
            super().__init__(None)
            self.kept = []

        def kernel_playable(self):
            return True

        def networks(self):
            return stack(self.kept)

    member = Growing()
    env = SnipSnapVecEnv(64, 3, opponents=[member], seed=2, lead_values=2)  # most_copies continues the learner
    member.kept += [agents.make("ppo").networks(), agents.make("ppo_scratch").networks()]
    env.reset()
    codes = env.seat_codes()[~env._learns]
    assert set(codes.tolist()) == {NETWORK + 1, NETWORK + 2}  # one of its two networks per seat
    for _ in range(5):
        env.step(env.action_masks()[:, :13].argmax(axis=1))

"""The other seats of a training table played in one compiled call (BatchEnv.play_others), when every pool
member is a scripted kernel policy: the same game as the Python path, one step per turn."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from snipsnap_env.batch import BatchEnv
from snipsnap_env.kernel import POLICIES

pytest.importorskip("stable_baselines3")

from snipsnap_env.vec_env import SELF, SnipSnapVecEnv  # noqa: E402


@pytest.mark.parametrize("num_players", [3, 5, 8])
def test_play_others_stops_at_a_learning_seat_or_the_deals_end(num_players):
    batch = BatchEnv(300, num_players, seed=num_players)
    batch.reset()
    rng = np.random.default_rng(0)
    learns = rng.random((300, num_players)) < 0.3
    learns[np.arange(300), rng.integers(num_players, size=300)] = True
    policies = rng.integers(len(POLICIES), size=(300, num_players))
    for step in range(20):
        _, mask, _, ended, infos = batch.play_others(learns, policies)
        at_choice = learns[np.arange(300), batch.to_act]
        assert (at_choice | ended).all()  # a learning seat chooses, or the deal just ended and was dealt anew
        assert (mask[:, :13].sum(axis=1) >= 2).all()  # a real choice for whoever acts next
        np.testing.assert_allclose(infos["deal_score"][ended].sum(axis=1), 0.0, atol=1e-9)  # a whole deal: zero-sum
        assert ended.sum() > 0 or step < 3
        choosing = np.flatnonzero(at_choice)
        leads = np.where(mask[choosing, :13] > 0, rng.random((len(choosing), 13)), -1).argmax(axis=1)
        actions = np.zeros(300, np.int64)
        actions[choosing] = leads
        active = np.zeros(300, bool)
        active[choosing] = True
        batch.step(actions, active=active)


@pytest.mark.parametrize("pool", [None, ["most_copies", "random_card"], ["fewest_copies", SELF]])
@pytest.mark.slow
def test_the_compiled_and_the_python_other_seats_make_the_same_game(pool):
    """The learner's chips a deal and the deals' lengths, random leads on both, agree within sampling error
    (the two paths draw from different streams, so only in distribution)."""
    members = None if pool is None else [m if m == SELF else agents.make(m, seed=1) for m in pool]
    results = []
    for compiled in (True, False):
        env = SnipSnapVecEnv(512, 4, opponents=members, seed=7)
        assert (env._scripted_codes is not None) is True
        if not compiled:
            env._scripted_codes = None  # the Python path: one step per turn of the other seats
        env.reset()
        rng = np.random.default_rng(11)
        chips, steps = [], 0
        while len(chips) < 12_000:
            mask = env.action_masks()
            _, _, dones, infos = env.step(np.where(mask, rng.random(mask.shape), -1).argmax(axis=1))
            steps += env.num_envs
            chips += [info["deal_score"] for info, done in zip(infos, dones) if done and "deal_score" in info]
        results.append((np.array(chips), steps / len(chips)))
    (a, steps_a), (b, steps_b) = results
    error = np.hypot(a.std() / np.sqrt(len(a)), b.std() / np.sqrt(len(b)))
    assert abs(a.mean() - b.mean()) < 4 * error
    assert abs(steps_a - steps_b) < 0.05 * steps_b  # the learner's choices a deal


def test_a_pool_with_a_player_the_kernel_does_not_script_stays_in_python():
    assert SnipSnapVecEnv(4, 4, opponents=[agents.make("control")])._scripted_codes is None
    assert SnipSnapVecEnv(4, 4, opponents=[agents.make("random"), agents.make("pimc")])._scripted_codes is None


def test_a_policy_is_played_by_what_it_is_never_by_its_name():
    """A caller's function named like a kernel policy is played as it chooses; a subclass that changes how its
    parent chooses is not played as the parent; a class that declares a policy the kernel lacks is refused."""
    from agents.base import FunctionPolicy
    from agents.scripted import MostCopies
    from snipsnap_env.kernel_state import kernel_policy

    def lowest_rank(obs, mask):
        return mask.argmax(axis=1)

    impostor = FunctionPolicy(lowest_rank, name="most_copies")
    assert kernel_policy(impostor) is None
    env = SnipSnapVecEnv(4, 4, opponents=[impostor])
    assert env._scripted_codes is None and (env._opponent_codes == env._rollout_code).all()

    class Highest(MostCopies):
        def act_batch(self, obs, mask):
            return 12 - mask[:, 12::-1].argmax(axis=1)

    assert kernel_policy(Highest()) is None and SnipSnapVecEnv(4, 4, opponents=[Highest()])._scripted_codes is None

    class Unknown(MostCopies):
        kernel_policy = "invented_lead"

    with pytest.raises(ValueError, match="Unknown.kernel_policy is 'invented_lead', which the kernel does not play"):
        SnipSnapVecEnv(4, 4, opponents=[Unknown()])
    assert [kernel_policy(agents.make(n)) for n in ("random", "random_card", "most_copies", "fewest_copies")] == [
        "random", "random_card", "most_copies", "fewest_copies"
    ]  # fmt: skip

"""PPO's update scores only the ranks the hand holds (agents.rank_policy.RankSharedHead in training mode): on every
legal lead it gives the logits, the probabilities and the gradients of scoring all thirteen."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import agents  # noqa: E402
from agents.rank_policy import RankSharedHead  # noqa: E402
from snipsnap_env.batch import BatchEnv  # noqa: E402


def positions(players: int, steps: int):
    env, policy = BatchEnv(1024, players, seed=players), agents.make("random", seed=1)
    obs, mask = env.reset()
    for _ in range(steps):
        obs, mask, *_ = env.step(policy.act_batch(obs, mask))
    return torch.as_tensor(obs), torch.as_tensor(mask > 0)


@pytest.mark.parametrize("players, steps", [(3, 0), (4, 5), (6, 2), (8, 9)])
def test_held_ranks_only_give_the_same_legal_logits_and_gradients(players, steps):
    obs, legal = positions(players, steps)
    assert bool(((obs[:, :13] > 0) | ~legal[:, :13]).all())  # every legal lead is a held rank
    torch.manual_seed(0)
    head = RankSharedHead()

    def run(training: bool):
        head.train(training)
        head.zero_grad()
        logits = torch.where(legal, head(obs), torch.tensor(-1e8))
        loss = (logits.log_softmax(dim=1) * legal).sum() / legal.sum()
        loss.backward()
        return logits.detach(), [p.grad.clone() for p in head.parameters()]

    (all_ranks, all_grads), (held, held_grads) = run(False), run(True)
    np.testing.assert_allclose(held[legal].numpy(), all_ranks[legal].numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(all_grads, held_grads):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-4, atol=1e-6)

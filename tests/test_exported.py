"""agents.exported: another library's network kept as data (layers in a .npz) and played by spec, greedily."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import snipsnap_env

torch = pytest.importorskip("torch", reason="exporting a network needs torch: pip install -e '.[train]'")
from torch import nn  # noqa: E402

from agents.exported import layers_of, save  # noqa: E402


def network() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(snipsnap_env.OBS_DIM, 16), nn.ReLU(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, snipsnap_env.NUM_ACTIONS))  # fmt: skip


def test_the_kept_network_takes_the_legal_action_of_the_highest_output_as_torch_computes_it(tmp_path):
    net = network()
    agent = agents.make(f"{save(tmp_path / 'net', net)}:agent", seed=0)
    rng = np.random.default_rng(0)
    obs = rng.random((256, snipsnap_env.OBS_DIM), dtype=np.float32)
    mask = rng.random((256, snipsnap_env.NUM_ACTIONS)) < 0.4
    mask[np.arange(256), rng.integers(0, snipsnap_env.NUM_ACTIONS, 256)] = True  # never an empty mask
    with torch.no_grad():
        expected = net(torch.from_numpy(obs)).masked_fill(~torch.from_numpy(mask), -torch.inf).argmax(dim=1)
    assert (agent.act_batch(obs, mask) == expected.numpy()).all()


def test_layers_other_than_linear_and_its_activations_are_refused_by_kind():
    with pytest.raises(ValueError, match="cannot export a LayerNorm layer"):
        layers_of(nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4)))
    with pytest.raises(ValueError, match="must follow a linear layer"):
        layers_of(nn.Sequential(nn.Tanh(), nn.Linear(4, 4)))


def test_weights_replaced_beside_the_agent_file_are_refused_naming_the_file(tmp_path):
    agent = save(tmp_path / "net", network())
    save(tmp_path / "other", nn.Sequential(nn.Linear(snipsnap_env.OBS_DIM, snipsnap_env.NUM_ACTIONS)))
    (tmp_path / "other.npz").replace(tmp_path / "net.npz")
    with pytest.raises(ValueError, match="net.npz is not the file it was saved with"):
        agents.make(f"{agent}:agent", seed=0)
    (tmp_path / "net.npz").unlink()
    with pytest.raises(ValueError, match="its weights .*net.npz are missing"):
        agents.make(f"{agent}:agent", seed=0)

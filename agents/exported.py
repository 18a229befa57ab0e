"""A network another RL library trained, kept as data and played as an agent of your own: its layers in a ``.npz``
(weights and biases as arrays, activations by name: loading it never runs code) and, beside it, a three-line agent
file that every job takes by spec (``path/to/name.py:agent``, docs/agents.md). The file holds the arrays' SHA-256,
so results keyed by the file's hash change when the weights do, and a replaced ``.npz`` is refused.

    from agents.exported import save
    save("runs/cleanrl_s0", agent.actor, describe="examples/cleanrl_ppo.py --rules scarne:ranks=4 --seed 0")
    # -> runs/cleanrl_s0.npz and runs/cleanrl_s0.py; python -m train.exact --candidates runs/cleanrl_s0.py:agent

Played greedily: the legal action of the highest output (a policy's logits or a Q-network's values alike).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from .base import FunctionPolicy

ACTIVATIONS = {
    "identity": lambda x: x,
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}
_TORCH_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu", "Identity": "identity"}


def layers_of(*modules) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """The (weight, bias, activation after it) of each linear layer of torch ``modules`` applied one after another
    (``nn.Sequential``s are walked in order): a ValueError naming any other kind of layer."""
    layers: list = []

    def walk(module):
        kind = type(module).__name__
        children = list(module.children())
        if kind == "Linear":
            bias = module.bias.detach().numpy() if module.bias is not None else np.zeros(module.out_features)
            layers.append([module.weight.detach().numpy().astype(np.float32), bias.astype(np.float32), "identity"])
        elif kind in _TORCH_ACTIVATIONS:
            if not layers or layers[-1][2] != "identity":
                raise ValueError(f"an activation ({kind}) must follow a linear layer to be exported")
            layers[-1][2] = _TORCH_ACTIVATIONS[kind]
        elif children:
            for child in children:
                walk(child)
        else:
            raise ValueError(f"cannot export a {kind} layer: only Linear, {', '.join(_TORCH_ACTIVATIONS)} in order")

    for module in modules:
        walk(module)
    if not layers:
        raise ValueError("nothing to export: no linear layer in the modules given")
    return [tuple(layer) for layer in layers]


def save(stem, *modules, describe: str = "") -> Path:
    """``stem.npz`` (the layers of torch ``modules``, :func:`layers_of`) and ``stem.py`` (the agent file naming it,
    with its SHA-256); returns the agent file's path: its spec is ``<path>:agent``."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for i, (weight, bias, activation) in enumerate(layers_of(*modules)):
        arrays |= {f"w{i}": weight, f"b{i}": bias, f"a{i}": np.array(activation)}
    weights = stem.with_suffix(".npz")
    np.savez(weights, **arrays)
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()
    agent = stem.with_suffix(".py")
    agent.write_text(
        f'"""{describe or "an exported network"}: its greedy policy; its layers in {weights.name}."""\n'
        "from agents.exported import load\n\n"
        f'agent = load(__file__, "{weights.name}", sha256="{digest}")\n'
    )
    return agent


def load(beside: str, weights: str, sha256: str) -> FunctionPolicy:
    """The greedy policy of the layers in ``weights`` (a file name beside ``beside``), refused unless their
    SHA-256 is ``sha256``."""
    path = Path(beside).parent / weights
    if not path.is_file():
        raise ValueError(f"{beside}: its weights {path} are missing")
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
        raise ValueError(f"{beside}: {path} is not the file it was saved with (another SHA-256): export it again")
    with np.load(path, allow_pickle=False) as kept:
        count = len([k for k in kept.files if k.startswith("w")])
        layers = [(kept[f"w{i}"], kept[f"b{i}"], str(kept[f"a{i}"])) for i in range(count)]
    unknown = {a for _, _, a in layers} - set(ACTIVATIONS)
    if unknown:
        raise ValueError(f"{path}: unknown activation {', '.join(sorted(unknown))}; known: {', '.join(ACTIVATIONS)}")

    def act(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = obs
        for weight, bias, activation in layers:
            x = ACTIVATIONS[activation](x @ weight.T + bias)
        return np.where(mask, x, -np.inf).argmax(axis=1)

    return FunctionPolicy(act, name=Path(beside).stem)

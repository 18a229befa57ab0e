"""A trained policy network as a policy. Greedy play needs numpy and safetensors only (the core install: the
actor's numpy twin, :mod:`agents.numpy_actor`); sampling, and the torch network itself, need the training extras.

With no path, the model shipped in ``agents/models/`` is loaded: ``scarne`` rules, every table size 3..8,
the distilled model trained on by PPO in a league (its file records the command; ``ppo_distilled`` and
``ppo_scratch`` are the other shipped models).
"""

from __future__ import annotations

import importlib.util
import json
import warnings
import zipfile
from pathlib import Path

import numpy as np

from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.observation import COLUMNS, LAYOUT, OBS_DIM, SLICES, column_map
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS
from snipsnap_env.state import CRITIC_INPUTS

from .base import Policy, check_masks
from .model_file import describe, is_policy_file, load_arrays, load_policy, save_policy
from .numpy_actor import NumpyActor, greedy_actions

_EVERY_TABLE = set(range(MIN_PLAYERS, MAX_PLAYERS + 1))
TIE_RULES = ("random", "lowest")
SHIPPED_MODEL = Path(__file__).parent / "models" / "ppo_scarne.zip"
LAYOUT_FILE = "snipsnap_layout.json"  # inside an SB3 zip saved by older versions: its observation layout
TRAINED_ON_FILE = "snipsnap_trained_on.json"  # inside an SB3 zip saved by older versions: its tables


def save_model(model, path: str | Path, trained_on: dict | None = None, training: dict | None = None) -> Path:
    """The policy network of MaskablePPO ``model`` in the project's model format (agents.model_file: tensors
    and JSON, nothing pickled), with ``trained_on`` (the table sizes and rules it learned) and ``training``
    (how: the algorithm, its settings and the command that trains it again)."""
    extra = {"trained_on": trained_on or {}, "num_timesteps": int(model.num_timesteps)}
    if training:
        extra["training"] = training
    return save_policy(model.policy, path, extra)


def layout_difference(saved: list) -> str:
    """What differs between a model's saved observation layout and this version's, in words ('' if none)."""
    saved = [tuple(field) for field in saved]
    if saved == list(LAYOUT):
        return ""
    gone = [name for name, _ in saved if name not in dict(LAYOUT)]
    new = [name for name, _ in LAYOUT if name not in dict(saved)]
    resized = [f"{name} {size}->{dict(LAYOUT)[name]}" for name, size in saved if dict(LAYOUT).get(name, size) != size]
    parts = [f"fields only in the model: {gone}" if gone else "", f"new fields: {new}" if new else ""]
    parts.append(f"resized: {resized}" if resized else "")
    return "; ".join(part for part in parts if part) or "the fields are in another order"


def load_trusted_sb3(path: Path):
    """``(network, meta)`` of a Stable-Baselines3 MaskablePPO zip. **Runs the pickled code in the file**: call
    it only for files from a source you trust."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, device="cpu")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        layout = json.loads(archive.read(LAYOUT_FILE)) if LAYOUT_FILE in names else None
        trained_on = json.loads(archive.read(TRAINED_ON_FILE)) if TRAINED_ON_FILE in names else {}
    shape = getattr(model.observation_space, "shape", None)
    allowed = [(OBS_DIM + extra,) for extra in CRITIC_INPUTS]  # a critic may read columns after the observation
    if shape not in allowed:
        raise ValueError(
            f"{path} was trained for observations of shape {shape}; this version of snipsnap_env makes "
            f"observations of shape ({OBS_DIM},), which a critic may follow with {', '.join(map(str, CRITIC_INPUTS))} "
            "columns: retrain the model"
        )
    describe(model.policy)  # its kind and critic columns are the project's (only rank_shared reads past the obs)
    if getattr(model.action_space, "n", None) != NUM_ACTIONS:
        raise ValueError(f"{path} was trained for {model.action_space}; expected Discrete(14)")
    meta = {"trained_on": trained_on, "num_timesteps": model.num_timesteps}
    if layout is not None:
        meta["layout"] = layout
    return model.policy, meta


_HAS_TORCH = all(importlib.util.find_spec(name) is not None for name in ("torch", "sb3_contrib"))


def _actor_of(path: Path, arrays: dict, meta: dict, columns) -> NumpyActor:
    """The numpy actor of a model file's weights, tried once on blank observations: weights whose names or
    shapes do not fit the declared policy are refused here in one line, not at the first decision."""
    try:
        actor = NumpyActor.from_arrays(arrays, meta["policy"], meta["observation_dim"], columns)
        for rows in (1, 16):  # the compiled path for a few rows, numpy's for more
            if actor.logits(np.zeros((rows, OBS_DIM), np.float32)).shape != (rows, NUM_ACTIONS):
                raise ValueError("it makes logits of another shape")
    except (KeyError, ValueError, IndexError, TypeError) as error:
        raise ValueError(
            f"{path}: its weights do not fit a {meta['policy']} policy of these sizes ({type(error).__name__}: "
            f"{error})"
        ) from None
    return actor


class PPOPolicy(Policy):
    """Greedy (``deterministic=True``) or sampled actions of a trained policy network, always within the mask.

    Greedy play draws among the ranks the observation cannot tell apart (``ties="random"``); ``ties="lowest"``
    plays the lowest of them, the convention of versions before 2026-12-03 (kept to measure what it costs:
    ``python -m train.tie_rule``).

    ``path`` is a file in the project's model format (what ``python -m train.train_ppo`` writes; loading it
    runs no code from the file). A plain Stable-Baselines3 zip loads only with ``trust=True``, because SB3
    unpickles Python objects from it, which can run any code its author put there.
    """

    name = "ppo"

    def __init__(
        self,
        path: str | Path | None = None,
        deterministic: bool = True,
        seed: int | None = None,
        device: str = "cpu",
        trust: bool = False,
        ties: str = "random",
    ):
        super().__init__(seed)
        if ties not in TIE_RULES:
            raise ValueError(f"ties got {ties!r}; allowed: {', '.join(map(repr, TIE_RULES))}")
        self.ties = ties
        self.path = Path(path) if path is not None else SHIPPED_MODEL
        if not self.path.is_file():
            hint = " (the shipped model is missing from this install)" if path is None else ""
            raise FileNotFoundError(
                f"no PPO model file at {self.path}{hint}; expected a model saved by python -m train.train_ppo"
            )
        if not zipfile.is_zipfile(self.path):
            raise ValueError(
                f"{self.path} is not a readable model file (not a zip archive); expected a model saved by "
                "python -m train.train_ppo"
            )
        self.device, self._network, arrays = device, None, None
        if is_policy_file(self.path):
            arrays, meta = load_arrays(self.path)  # the torch network is built only if asked for (self.network)
        elif not trust:
            raise ValueError(
                f"{self.path} is not in snipsnap's model format; if it is a Stable-Baselines3 zip, loading it "
                "runs pickled code from the file: pass trust=True (--trust-model) only if you trust its source, "
                "or convert it once with python -m train.convert_model"
            )
        else:
            try:
                self._network, meta = load_trusted_sb3(self.path)
            except Exception as error:  # truncated, foreign or damaged files fail in many ways inside SB3 and torch
                raise ValueError(
                    f"{self.path} is not a readable MaskablePPO model ({type(error).__name__}: {error}); "
                    "expected a .zip saved by python -m train.train_ppo"
                ) from None
        # A model saved before a rule option was added reads its own columns, found here by name; it plays
        # wherever the new columns are 0 (the option at its default), and refuses a table that sets one.
        try:
            self._columns, self._unseen = column_map(meta["layout"]) if meta.get("layout") else (None, [])
        except ValueError as error:
            raise ValueError(
                f"{self.path} was trained on another observation layout than this version of snipsnap_env makes "
                f"({error}; {layout_difference(meta['layout'])}): retrain the model"
            ) from None
        self._unseen_at = np.array([COLUMNS.index(name) for name in self._unseen], np.int64)
        trained_on = meta.get("trained_on")
        self.trained_on = trained_on if isinstance(trained_on, dict) else {}
        players = self.trained_on.get("players")
        if not (isinstance(players, list) and all(type(n) is int for n in players)):
            self.trained_on.pop("players", None)  # only ever used to warn; a file's odd value is not an error
        self._warned_tables: set[int] = set()
        self.deterministic = deterministic
        trained = self.trained_on.get("players")
        warns = bool(trained) and not set(trained) >= _EVERY_TABLE
        if arrays is None:  # a trusted SB3 zip: its network is loaded already
            self._network.set_training_mode(False)
            self._network.to(device)
            self._actor = NumpyActor(self._network, self._columns)
        else:
            self._actor = _actor_of(self.path, arrays, meta, self._columns)
        # __call__'s one compiled call: nothing to warn of per decision, greedy with ties drawn (a model saved before
        # a rule option too: the kernel's network weighs the option's columns 0, and a table that sets them is
        # left to the general path, which refuses it)
        self._single_fast = deterministic and ties == "random" and not warns

    @property
    def network(self):
        """The torch policy network (built on first use from the file: needs torch and sb3-contrib)."""
        if self._network is None:
            if not _HAS_TORCH:
                from snipsnap_env.install import install_hint

                raise ModuleNotFoundError(
                    f"{self.path.name}'s torch network needs torch and sb3-contrib: {install_hint('train')} "
                    "(greedy play does not: it runs on numpy)"
                )
            self._network, _ = load_policy(self.path)
            self._network.to(self.device)
        return self._network

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, 14) action probabilities of the model, zero outside the mask: torch's masked softmax where the
        training extras are installed, the same softmax of the numpy twin's logits where they are not."""
        mask = check_masks(mask)
        if not _HAS_TORCH:
            logits = np.where(mask, self.logits(obs).astype(np.float64), -np.inf)
            weights = np.exp(logits - logits.max(axis=1, keepdims=True))
            return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)
        import torch

        with torch.no_grad():
            obs_tensor = torch.as_tensor(self._own_columns(obs), device=self.network.device)
            distribution = self.network.get_distribution(obs_tensor, action_masks=mask)
            return distribution.distribution.probs.cpu().numpy()

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """(B, 14) the actor's logits, computed by its numpy twin (agents.numpy_actor: the network's weights,
        no torch call, compiled loops for a few rows): what a greedy decision needs, in tens of microseconds."""
        obs = np.asarray(obs, np.float32)
        self._refuse_unseen(obs)
        return self._actor.logits(obs)

    def torch_logits(self, obs: np.ndarray) -> np.ndarray:
        """(B, 14) the same logits from the torch network (one plain forward under ``inference_mode``)."""
        import torch

        network = self.network
        with torch.inference_mode():
            x = torch.as_tensor(self._own_columns(obs), device=network.device)
            latent = network.mlp_extractor.forward_actor(network.extract_features(x, network.pi_features_extractor))
            return network.action_net(latent).cpu().numpy()

    def _own_columns(self, obs) -> np.ndarray:
        """The observation as the model was trained to read it: this version's columns in its saved layout."""
        obs = np.asarray(obs, np.float32)
        self._refuse_unseen(obs)
        return obs if self._columns is None else obs[:, self._columns]

    def check_table(self, rules, num_players: int) -> None:
        """A ValueError, before any play, when the table's rules set a column of an option added after the model
        was trained (what :meth:`_refuse_unseen` would find at the first lead)."""
        from snipsnap_env.observation import table_template
        from snipsnap_env.rules import make_rules

        self._refuse_unseen(table_template(make_rules(rules), num_players)[None, :].astype(np.float32))

    def _refuse_unseen(self, obs: np.ndarray) -> None:
        """A ValueError when ``obs`` sets a column of a rule option added after the model was trained."""
        if self._unseen and obs[:, self._unseen_at].any():
            used = sorted({self._unseen[i] for i in np.flatnonzero(obs[:, self._unseen_at].any(axis=0))})
            raise ValueError(
                f"{self.path.name} was trained before this version's {', '.join(used)}: it cannot play a table "
                "that uses it (retrain the model with the option at its tables)"
            )

    def greedy(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The legal action with the highest logit (the masked softmax's mode), from the numpy twin, and from
        torch for the rare rows whose two best logits differ by less than float32 rounding, so the choice is the
        torch network's own. Ranks the observation cannot tell apart have equal logits: one of them is drawn
        uniformly with the policy's generator (:func:`agents.numpy_actor.greedy_actions`)."""
        legal = check_masks(mask)
        obs = np.asarray(obs)
        rng = self.rng if self.ties == "random" else None
        exact = (lambda rows: self.torch_logits(obs[rows])) if _HAS_TORCH else None  # without: the twin decides
        return greedy_actions(self.logits(obs), legal, rng, exact)

    def kernel_playable(self) -> bool:
        """Whether the kernel can play this policy in compiled code (:meth:`networks`): greedy and rank-shared
        with one hidden scorer layer. A model trained before a rule option was added plays there too, the
        option's columns weighted 0 (what it computes wherever they are 0); a table that sets the option is
        refused where the table is known (:meth:`refuse_table`)."""
        playable = self.deterministic and self.ties == "random"  # the kernel's network seats draw among ties
        return playable and self._actor.kernel_networks is not None

    def refuse_table(self, obs: np.ndarray) -> None:
        """A ValueError in one line if the observations ``obs`` (B, OBS_DIM) come from a table that sets a rule
        option this model was trained before (the kernel, which plays it from its weights, would not see)."""
        self._refuse_unseen(np.asarray(obs, np.float32).reshape(-1, OBS_DIM))

    def networks(self):
        """The network as :mod:`snipsnap_env.kernel_network` plays it (greedy) in rollouts and batched tables."""
        if not self.kernel_playable():
            raise ValueError(
                f"{self.path.name}: the kernel plays greedy rank-shared models of this layout only, drawing among "
                f"tied ranks (this one: deterministic={self.deterministic}, ties={self.ties!r})"
            )
        return self._actor.networks()

    def __call__(self, observation: dict) -> int:
        """One AEC decision; greedy play of a network the kernel plays takes one compiled call (the same choice and
        draws as :meth:`act_batch`, which decides wherever this cannot: a near-tie, an odd input, a warning)."""
        if self._single_fast:
            obs = np.asarray(observation["observation"], np.float32)
            mask = np.asarray(observation["action_mask"])
            shaped = obs.shape == (OBS_DIM,) and mask.shape == (NUM_ACTIONS,)
            if shaped and not (self._unseen and obs[self._unseen_at].any()):  # a table to refuse: the general path
                action = self._actor.decide_one(obs, mask, self.rng, _HAS_TORCH)
                if action is not None:
                    return action
        return super().__call__(observation)

    def act_batch(self, obs, mask):
        self._warn_on_other_tables(obs)
        if self.deterministic:
            return self.greedy(obs, mask)
        probs = self.probabilities(obs, mask)
        # sample with the policy's own generator, never torch's global one
        draws = self.rng.random((len(probs), 1))
        actions = np.minimum((probs.cumsum(axis=1) < draws).sum(axis=1), probs.shape[1] - 1)
        rounded = probs[np.arange(len(probs)), actions] == 0  # a draw past a cumsum that rounds below 1
        actions[rounded] = probs[rounded].argmax(axis=1)
        return actions

    def _warn_on_other_tables(self, obs) -> None:
        """Say once per table size when the model plays a table it was not trained for."""
        trained = self.trained_on.get("players")
        if not trained or set(trained) >= _EVERY_TABLE:  # nothing to say (and no per-decision cost)
            return
        sizes = MIN_PLAYERS + np.asarray(obs)[:, SLICES["num_players"]].argmax(axis=1)
        for n in set(sizes.tolist()) - set(trained) - self._warned_tables:
            self._warned_tables.add(n)
            warnings.warn(f"{self.path.name} was trained for {trained} players, not {n}: expect weaker play")

    def __repr__(self) -> str:
        return f"PPOPolicy({str(self.path)!r})"

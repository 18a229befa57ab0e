"""A MaskablePPO policy that scores every rank with one shared network (needs torch and sb3-contrib).

The game treats ranks alike, and at a lead nothing public tells two ranks held equally often apart, so
the lead logit of rank r is one small network applied to rank r's own features (held, played, unseen,
open) together with a summary of the table (everything else in the observation, plus how many ranks the
hand holds once, twice, three and four times). Every rank's experience trains the same weights: the
policy learns "lead a rank like this" once instead of thirteen times. The value network is SB3's MLP.

Given observations with more columns after the observation's (``train_ppo --critic state``: every hand
relative to the learner, :mod:`snipsnap_env.state`), the value network reads them all and the action head
still only the observation: an asymmetric actor-critic whose actor plays from what the player sees.

    python -m train.train_ppo --policy rank_shared
"""

from __future__ import annotations

from functools import partial

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from torch import nn

from snipsnap_env.cards import CARDS_PER_RANK, NUM_RANKS
from snipsnap_env.observation import OBS_DIM, PER_RANK, SLICES

from .rank_sizes import CONTEXT_START, RANK_FEATURES, table_features, value_arch  # noqa: F401 (re-exported)
from .threads import on_torch_threads

_PER_RANK = PER_RANK
_CONTEXT_START = CONTEXT_START
TABLE_FEATURES = table_features()
#: the orthogonal init's gain of the scorer's last layer. SB3 gives a policy's last layer 0.01 so that it starts
#: near uniform; the scorer starts there anyway (its hidden layers' default init: scores within 0.003 of each other),
#: and at 0.01 PPO's first iterations drove its second tanh layer into saturation before the ranks' scores parted
#: in some runs: every rank then scored alike and the run ended at most_copies' level (docs/speed.md, seed 3)
SCORER_GAIN = 1.0
#: the rollouts' forward in this many pieces: one per core on 2 cores, the same pieces (so bytes) on any machine
FORWARD_PIECES = 2


class RankSharedHead(nn.Module):
    """Observation (B, OBS_DIM) → 14 logits: 13 from the shared rank scorer, 1 for passing."""

    def __init__(self, context_dim: int = 32, hidden: int = 64, obs_dim: int = OBS_DIM):
        super().__init__()
        self.obs_dim = obs_dim  # a model saved by an earlier version reads its own (narrower) observation
        self.context = nn.Sequential(nn.Linear(table_features(obs_dim), context_dim), nn.Tanh())
        self.scorer = nn.Sequential(
            nn.Linear(RANK_FEATURES + context_dim, hidden),
            nn.Tanh(),
            nn.Linear(hidden, hidden),
            nn.Tanh(),
            nn.Linear(hidden, 1),
        )
        self.pass_logit = nn.Linear(context_dim, 1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.logits(*self.inputs(obs))

    def inputs(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """What the head reads of each row: (B, 13, 4) the ranks' own features, (B, table) the table's, (B, 13)
        the ranks held. A function of the observation alone, so an update may compute it once for all its
        epochs (train.learn.rollout_critic.AllActionPPO)."""
        # The observation's columns only: a critic may be fed more (the hidden hands, snipsnap_env.state)
        # after them, which the actor must never see.
        obs = obs[:, : self.obs_dim]
        per_rank = torch.stack([obs[:, SLICES[name]] for name in _PER_RANK], dim=-1)  # (B, 13, 4)
        copies = torch.round(obs[:, SLICES["hand"]] * CARDS_PER_RANK)
        histogram = torch.stack([(copies == k).float().sum(dim=1) for k in range(CARDS_PER_RANK + 1)], dim=1)
        return per_rank, torch.cat([obs[:, _CONTEXT_START:], histogram / NUM_RANKS], dim=1), copies > 0

    def logits(self, per_rank: torch.Tensor, table: torch.Tensor, held: torch.Tensor) -> torch.Tensor:
        """14 logits from :meth:`inputs`: 13 from the shared rank scorer, 1 for passing."""
        context = self.context(table)
        if self.training:
            scores = self._held_scores(per_rank, context, held)
        else:
            shared = torch.cat([per_rank, context.unsqueeze(1).expand(-1, NUM_RANKS, -1)], dim=-1)
            scores = self.scorer(shared).squeeze(-1)
        return torch.cat([scores, self.pass_logit(context)], dim=1)

    def _held_scores(self, per_rank, context, held):
        """The ranks' logits where the hand holds the rank, 0 elsewhere: a rank not held is never a legal lead, so
        the mask drops its logit. PPO's update (the training mode) scores only these rows: at a lead the hand
        holds 3–10 of the 13 ranks (the head's passes 2.8× faster alone; the update as a whole measured no
        faster, docs/speed.md)."""
        games, ranks = held.nonzero(as_tuple=True)
        rows = torch.cat([per_rank[games, ranks], context[games]], dim=1)
        scores = per_rank.new_zeros(held.shape)
        return scores.index_put((games, ranks), self.scorer(rows).squeeze(-1))


class RankSharedPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose action head is :class:`RankSharedHead` on the raw observation."""

    reads_values = True  # whether the rollouts' forward computes the values (a trainer that reads none turns it off)

    def __init__(
        self, *args, net_arch=None, rank_context: int = 32, rank_hidden: int = 64, obs_dim: int = OBS_DIM, **kwargs
    ):
        vf = value_arch(net_arch)
        # read by _build, inside super().__init__; obs_dim: the observation columns before any critic's
        self.rank_context, self.rank_hidden, self.obs_dim = rank_context, rank_hidden, obs_dim
        # pi=[]: the policy latent is the observation itself, which the shared head reads
        super().__init__(*args, net_arch={"pi": [], "vf": list(vf)}, **kwargs)

    def forward(self, obs: torch.Tensor, deterministic: bool = False, action_masks=None):
        """MaskableActorCriticPolicy's forward (the rollouts' choices: thousands of positions a step), with the head
        run in :data:`FORWARD_PIECES` pieces on the cores and the value network skipped where nothing reads its
        values (``reads_values`` off: train.learn.rollout_critic.AllActionPPO): 2.5x faster a call here."""
        features = self.extract_features(obs)  # the observation itself: the policy net is empty (pi=[])
        if self.reads_values:
            values = self.value_net(self.mlp_extractor.forward_critic(features))
        else:
            values = features.new_zeros(len(features), 1)
        pieces = features.chunk(FORWARD_PIECES)
        logits = torch.cat(on_torch_threads([partial(self.action_net, rows) for rows in pieces]))
        distribution = self.action_dist.proba_distribution(action_logits=logits)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        return actions.reshape((-1, *self.action_space.shape)), values, distribution.log_prob(actions)

    def _get_constructor_parameters(self) -> dict:
        # saved with the model, so a loaded model rebuilds a head of the same size
        return {
            **super()._get_constructor_parameters(),
            "rank_context": self.rank_context,
            "rank_hidden": self.rank_hidden,
            "obs_dim": self.obs_dim,
        }

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = RankSharedHead(self.rank_context, self.rank_hidden, self.obs_dim)
        if self.ortho_init:  # (SB3 shrinks a policy's last layer to 0.01: not this one, see SCORER_GAIN)
            self.action_net.scorer[-1].apply(lambda m: self.init_weights(m, gain=SCORER_GAIN))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

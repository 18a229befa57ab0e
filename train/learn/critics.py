"""Where PPO's advantages come from (``train_ppo --critic``): one object per critic, so that what a critic needs
(its columns after the observation, the env it trains on, the PPO class, the settings it allows) is said once.

=============  ==============================================================================================
critic         the advantage
=============  ==============================================================================================
observation    GAE, with a value network that reads what the learner sees
state          GAE, with a value network that also reads every hidden hand (:mod:`snipsnap_env.state`)
rollouts       each lead's value in the true deal, from ``--critic-rollouts`` rollouts per candidate
               (:mod:`train.learn.rollout_critic`): no value network is read
=============  ==============================================================================================

Every critic is training-only: the actor reads the observation alone, so a model plays from what its seat sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from snipsnap_env.kernel import POLICIES
from snipsnap_env.state import HANDS_DIM, LEAD_VALUES_DIM

SAMPLED, ALL_LEADS, AUTO = "sampled", "all_leads", "auto"  # --surrogate (train.learn.rollout_critic)
SURROGATES = (SAMPLED, ALL_LEADS, AUTO)
SELF = "self"  # as --rollout-policy: the learner's network (snipsnap_env.vec_env.SELF, which needs SB3 to import)


@dataclass(frozen=True)
class Critic:
    name: str
    extra_columns: int  # what the critic reads after the observation (snipsnap_env.state.CRITIC_INPUTS)
    learns_every_seat: bool  # its advantage ignores whose chips a step's reward holds: self-play seats may learn

    @property
    def sees_the_deal(self) -> bool:
        """Whether it reads more than the learner's observation: only an actor that reads the observation alone
        (rank_shared) may train with it, on the batched engine, which supplies the deal."""
        return self.extra_columns > 0

    def check(self, args) -> None:
        """A ValueError naming the setting when ``args`` (train_ppo.Args) asks for what this critic cannot do."""
        if self.sees_the_deal and (args.policy != "rank_shared" or args.vec != "batch"):
            raise ValueError(
                f"critic {self.name!r} needs --policy rank_shared (its actor reads the observation only; an MLP "
                "actor would see the hidden deal) and --vec batch (the batched engine supplies the deal)"
            )
        if self is ROLLOUTS and args.rollout_policy not in (*POLICIES, SELF):
            raise ValueError(
                f"rollout_policy got {args.rollout_policy!r}; the rollouts run in the kernel, which plays "
                f"{', '.join(POLICIES)} and {SELF!r} (the learner's network)"
            )
        if args.surrogate not in SURROGATES:
            raise ValueError(f"surrogate got {args.surrogate!r}; allowed: {', '.join(map(repr, SURROGATES))}")
        if args.surrogate == ALL_LEADS and self is not ROLLOUTS:
            raise ValueError(f"--surrogate {ALL_LEADS} needs every lead's value: --critic rollouts")
        if args.pfsp and self is not ROLLOUTS:
            raise ValueError("--pfsp weighs the pool by the lead values' gains: it needs --critic rollouts")

    def env_options(self, args) -> dict:
        """The keywords of :class:`snipsnap_env.vec_env.SnipSnapVecEnv` that give this critic its columns."""
        return {
            "critic_state": self is STATE,
            "lead_values": args.critic_rollouts if self is ROLLOUTS else 0,
            "rollout_policy": args.rollout_policy,
        }

    def model_class(self, surrogate: str = AUTO):
        """MaskablePPO, or for ``rollouts`` its subclass whose advantages come from the lead values (the
        surrogate over the sampled lead, or over every legal lead: train.learn.rollout_critic)."""
        if self is ROLLOUTS:
            from .rollout_critic import AllActionPPO, RolloutCriticPPO

            return RolloutCriticPPO if surrogate == SAMPLED else AllActionPPO
        from sb3_contrib import MaskablePPO

        return MaskablePPO


OBSERVATION = Critic("observation", 0, learns_every_seat=False)
STATE = Critic("state", HANDS_DIM, learns_every_seat=False)
ROLLOUTS = Critic("rollouts", LEAD_VALUES_DIM, learns_every_seat=True)
CRITICS = {critic.name: critic for critic in (OBSERVATION, STATE, ROLLOUTS)}


def critic_named(name: str) -> Critic:
    """The critic of ``--critic name``; a ValueError naming the allowed ones otherwise."""
    if name not in CRITICS:
        raise ValueError(f"critic got {name!r}; allowed: {', '.join(map(repr, CRITICS))}")
    return CRITICS[name]

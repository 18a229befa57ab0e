"""A gymnasium ``Env`` in which the learner holds one seat and the other seats are policies.

The other seats are stepped inside ``step()``, forced turns (one legal action) are played automatically,
so the learner only sees its real choices; ``action_masks()`` serves sb3-contrib's MaskablePPO; rewards
are the learner's chips (deal points with chips off), summed from its last choice to its next one — or,
with ``reward="lead_advantage"``, the training signal (:mod:`snipsnap_env.training_signal`). An episode is
one match (``num_deals`` deals, 1 by default). Chips that move before the learner's first choice (the ante,
other players' penalties) arrive with its first reward; a deal that ends before the learner ever chooses is
dealt again, since nothing in it was the learner's doing. An illegal action ends the episode with reward −1, as
in ``snipsnap_env.env()``.

>>> import gymnasium, snipsnap_env
>>> env = gymnasium.make("snipsnap/SingleSeat-v0", num_players=4)
>>> obs, info = env.reset(seed=0)
>>> obs.shape == (snipsnap_env.OBS_DIM,)
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium
import numpy as np
from gymnasium import spaces

from .aec import ILLEGAL_REWARD, check_options, check_seed
from .engine import NUM_ACTIONS, Match, as_action, check_optional_seat
from .observation import HIGH, LOW, OBS_DIM, encode
from .render import table_text
from .rules import check_table, make_rules
from .training_signal import DEFAULT_ROLLOUTS, signal_for

OpponentPolicy = Callable[[dict], int]  # an AEC observation dict -> action, e.g. any agents.Policy


class SingleSeatEnv(gymnasium.Env):
    """One learner seat against ``opponents``; each other seat draws a policy from the pool per episode.

    ``opponents``: a sequence of policies (callables taking ``{"observation", "action_mask"}``; those with a
    ``reseed(seed)`` method are reseeded by ``reset(seed=...)``); None means uniformly random legal actions.
    ``learner_seat``: a seat, or None for a random seat each episode. ``reward``: ``"chips"`` (the learner's
    chips), or ``"lead_advantage"``, the training signal of :mod:`snipsnap_env.training_signal` (each real lead's
    advantage over most_copies' in the true deal, from ``reward_rollouts`` rollouts a lead).
    """

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        num_players: int = 6,
        rules="scarne",
        opponents: Sequence[OpponentPolicy] | None = None,
        learner_seat: int | None = None,
        num_deals: int = 1,
        render_mode: str | None = None,
        reward: str = "chips",
        reward_rollouts: int = DEFAULT_ROLLOUTS,
    ):
        self.rules = make_rules(rules)
        self.num_players = check_table(self.rules, num_players)
        check_optional_seat("learner_seat", learner_seat, num_players)
        if opponents is not None and (len(opponents) == 0 or not all(callable(p) for p in opponents)):
            raise ValueError(
                "opponents must be None or a non-empty sequence of policies (callables on an observation dict)"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode got {render_mode!r}; allowed: None, 'ansi', 'human', 'rgb_array'")
        self.opponents = list(opponents) if opponents is not None else None
        #: "chips" pays the learner's chips; "lead_advantage" the training signal of snipsnap_env.training_signal
        self.reward, self._signal = signal_for(reward, reward_rollouts, self.rules, self.num_players)
        self.fixed_seat = learner_seat
        self.render_mode = render_mode
        self.observation_space = spaces.Box(LOW, HIGH, shape=(OBS_DIM,), dtype=np.float32)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.match = Match(self.rules, self.num_players, num_deals)
        self.learner_seat = 0
        self._seat_policy: list[OpponentPolicy | None] = []
        self._carry = 0.0
        self._ended = True  # until reset()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start an episode; ``options`` may fix the learner's seat: ``{"learner_seat": s}``."""
        seed = check_seed(seed)
        super().reset(seed=seed)
        if seed is not None and self._signal is not None:
            self._signal.seed_with_env(seed)
        options = check_options(options, ("learner_seat",))
        if "learner_seat" in options:
            seat = options["learner_seat"]
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.num_players:
                raise ValueError(f"options['learner_seat'] got {seat!r}; allowed: a seat 0..{self.num_players - 1}")
        if seed is not None and self.opponents is not None:  # same seed, same game: opponents' streams too
            for policy in self.opponents:
                if hasattr(policy, "reseed"):
                    policy.reseed(int(self.np_random.integers(2**63)))
        while True:
            fixed = options.get("learner_seat", self.fixed_seat)
            self.learner_seat = fixed if fixed is not None else int(self.np_random.integers(self.num_players))
            self._seat_policy = [
                None if self.opponents is None else self.opponents[self.np_random.integers(len(self.opponents))]
                for _ in range(self.num_players)
            ]
            self.match.start(self.np_random)
            self._score_seen = float(self.rules.starting_chips if self.rules.chips else 0)
            self._carry = self._play_until_learner_chooses()
            if not self.match.over:
                self._ended = False
                return encode(self.match, self.learner_seat), self._info()

    def step(self, action):
        match = self.match
        if self._ended:
            raise RuntimeError("the episode is over; call reset()")
        action = as_action(action)  # a bool or a float is no rank: refused by name, as in env()
        if not self.action_space.contains(action) or int(action) not in match.deal.legal_actions():
            # PettingZoo's convention for classic games, as in snipsnap_env.env(): the offender loses the game
            gymnasium.logger.warn(f"illegal action {action!r}; legal: {match.deal.legal_actions()}; episode ends")
            self._ended = True
            info = {**self._info(), "illegal_action": True}
            return encode(match, self.learner_seat), float(ILLEGAL_REWARD), True, False, info
        position = None if self._signal is None else self._signal.at_lead(match.deal)
        match.apply(int(action))
        reward = self._carry + self._play_until_learner_chooses()
        self._carry = 0.0
        if self._signal is not None:  # the signal instead of the chips (the infos still report them)
            reward = 0.0 if position is None else self._signal.of_lead(position, int(action))
        terminated = self._ended = match.over
        obs = encode(match, self.learner_seat)
        if self.render_mode == "human":
            print(self.render() + "\n")
        return obs, reward, terminated, False, self._info()

    def _play_until_learner_chooses(self) -> float:
        """Play forced turns and other seats until the learner has a real choice; return its reward."""
        match = self.match
        while not match.over:
            deal = match.deal
            legal = deal.legal_actions()
            if len(legal) == 1:
                match.apply(legal[0])
            elif deal.to_act == self.learner_seat:
                break
            else:
                match.apply(self._opponent_action(deal.to_act, legal))
        score = float(match.score[self.learner_seat])
        reward, self._score_seen = score - self._score_seen, score
        return reward

    def _opponent_action(self, seat: int, legal: list[int]) -> int:
        policy = self._seat_policy[seat]
        if policy is None:
            return legal[self.np_random.integers(len(legal))]
        mask = self.match.deal.legal_mask()
        action = int(policy({"observation": encode(self.match, seat), "action_mask": mask}))
        if action not in legal:
            raise ValueError(
                f"opponent policy {policy!r} chose illegal action {action} for seat {seat}; legal: {legal}"
            )
        return action

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool vector (sb3-contrib's MaskablePPO convention)."""
        return self.match.deal.legal_mask().astype(bool)

    def _info(self) -> dict:
        return {"learner_seat": self.learner_seat, "chips": list(self.match.chips)}

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode; pass 'ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":  # the learner's view: its own hand face up
            from .picture import table_image

            return table_image(self.match, viewer=self.learner_seat)
        return table_text(self.match)

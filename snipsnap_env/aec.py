"""The PettingZoo AEC environment: a thin translator between agents and the engine's seats.

Agent ``player_i`` sits in seat ``i``. Observations and rewards are always from the observed agent's
side; the mask comes from the engine (the one source of legality).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .engine import NUM_ACTIONS, EnvOrderError, Match, check_optional_seat
from .observation import ENV_NAME, HIGH, LOW, OBS_DIM, encode
from .render import table_text
from .rules import check_table, make_rules
from .state import STATE_HIGH, STATE_LOW, global_state
from .training_signal import DEFAULT_ROLLOUTS, signal_for
from .wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper, TerminateIllegalWrapper

RESET_OPTIONS = ("hands", "dealer")
ILLEGAL_REWARD = -1  # PettingZoo's classic-games convention for an illegal move under env()


def env(**kwargs) -> AECEnv:
    """The wrapped environment (PettingZoo's convention): illegal moves end the game, order is enforced."""
    wrapped = raw_env(**kwargs)
    wrapped = TerminateIllegalWrapper(wrapped, illegal_reward=ILLEGAL_REWARD)
    wrapped = AssertOutOfBoundsWrapper(wrapped)
    return OrderEnforcingWrapper(wrapped)


def check_seed(seed) -> int | None:
    """``seed`` as a Python int (or None); a ValueError naming it unless it is a whole number ≥ 0 (True is no
    seed, though Python counts it as 1): every env's ``reset`` checks it here, before gymnasium would raise its
    own error type (or refuse numpy's whole numbers)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"reset got seed={seed!r}; allowed: a whole number of at least 0, or None")
    return None if seed is None else int(seed)


def check_options(options, known: tuple[str, ...]) -> dict:
    """``reset``'s options as a dict: None or a dict of known keys, else a clear error."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict (known keys: {', '.join(known)}), got {options!r}")
    unknown = sorted(set(options) - set(known))
    if unknown:  # a warning, not an error: PettingZoo's api_test resets with an unknown option on purpose
        warnings.warn(f"reset ignores unknown options {unknown}; known options: {', '.join(known)}")
    return options


def check_viewer(viewer, num_players: int) -> int | None:
    """None, or the seat whose hand the pictures show face up."""
    return check_optional_seat("viewer", viewer, num_players)


class raw_env(AECEnv, EzPickle):
    """Snip Snap Snorem for 3–8 players; ``raw_env`` raises :class:`IllegalActionError` on an illegal move."""

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "render_fps": 2,
        "name": ENV_NAME,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        num_players: int = 6,
        rules="scarne",
        num_deals: int = 1,
        render_mode: str | None = None,
        auto_forced: bool = False,
        viewer: int | None = None,
        info_events: bool = False,
        info_action_mask: bool = False,
        reward: str = "chips",
        reward_rollouts: int = DEFAULT_ROLLOUTS,
    ):
        EzPickle.__init__(
            self, num_players, rules, num_deals, render_mode, auto_forced, viewer, info_events, info_action_mask,
            reward, reward_rollouts,
        )  # fmt: skip
        super().__init__()
        self.rules = make_rules(rules)
        self.num_players = check_table(self.rules, num_players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode got {render_mode!r}; allowed: None, 'human', 'ansi', 'rgb_array'")
        self.render_mode = render_mode
        self.viewer = check_viewer(viewer, self.num_players)
        flags = {"auto_forced": auto_forced, "info_events": info_events, "info_action_mask": info_action_mask}
        for name, flag in flags.items():
            if not isinstance(flag, bool):
                raise ValueError(f"{name} got {flag!r}; allowed: True or False")
        self.auto_forced = auto_forced
        self.info_events = info_events
        self.info_action_mask = info_action_mask
        #: "chips" pays the chips; "lead_advantage" the training signal of snipsnap_env.training_signal
        self.reward, self._signal = signal_for(reward, reward_rollouts, self.rules, self.num_players)
        self._infos_deals = -1  # the deals_played the infos were last built for
        self._match = Match(self.rules, self.num_players, num_deals)
        self.possible_agents = [f"player_{seat}" for seat in range(self.num_players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(LOW, HIGH, shape=(OBS_DIM,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {agent: obs_space for agent in self.possible_agents}
        #: PettingZoo's global state for centralised critics: every hand, then seat 0's view (snipsnap_env.state)
        self.state_space = spaces.Box(STATE_LOW, STATE_HIGH, dtype=np.float32)
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self._rng: np.random.Generator | None = None
        self._last_events: list = []
        self._observed: dict = {}  # agent -> its observation of the current state

    # EzPickle would rebuild a fresh, never-reset env from the constructor's arguments; a copy or a pickle of a
    # game in progress must carry the game (the match, its random generator, the bookkeeping) instead.
    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    @property
    def match(self) -> Match:
        """The engine's match: read it, don't change it."""
        return self._match

    @property
    def last_events(self) -> list:
        """The events of the last step (or of the reset)."""
        return self._last_events

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent) -> dict:
        if self._rng is None:
            raise EnvOrderError("reset() must be called before observe()")
        # Encoded at most once per state and seat: the cache is emptied whenever the state changes (reset,
        # step). Callers get copies, so nobody can change what another caller sees.
        cached = self._observed.get(agent)
        if cached is None:
            seat = self.agent_name_mapping[agent]
            cached = self._observed[agent] = {"observation": encode(self._match, seat), "action_mask": self.mask(agent)}
        return {"observation": cached["observation"].copy(), "action_mask": cached["action_mask"].copy()}

    def state(self) -> np.ndarray:
        """The global state (every hand, in seat order from seat 0, then seat 0's observation): for critics
        in training only, never for a policy that plays (``snipsnap_env.state``)."""
        if self._rng is None:
            raise EnvOrderError("reset() must be called before state()")
        return global_state(self._match)

    def mask(self, agent) -> np.ndarray:
        """The engine's legal actions for ``agent`` (all zero when it is not to act)."""
        deal = self._match.deal
        if self.agent_name_mapping[agent] == deal.to_act and not deal.over:
            return deal.legal_mask()
        return np.zeros(NUM_ACTIONS, dtype=np.int8)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a match. ``options={"hands": [[card ids], ...], "dealer": d}`` plays a given first deal."""
        check_seed(seed)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
            if self._signal is not None:
                self._signal.seed_with_env(seed)
        options = check_options(options, RESET_OPTIONS)
        match = self._match
        self._observed = {}
        self._score_seen = [float(match.rules.starting_chips if match.rules.chips else 0)] * self.num_players
        events = match.start(self._rng, hands=options.get("hands"), dealer=options.get("dealer"))
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self._last_events = events + (self._play_forced() if self.auto_forced else [])
        while self.auto_forced and match.over and options.get("hands") is None:
            # a match with no real choice in it (small decks at 4+ players): nobody decides anything there, and the
            # libraries' AEC adapters (TorchRL's, Tianshou's) step the selected agent after reset, dead or not
            self._last_events = match.start(self._rng, dealer=options.get("dealer")) + self._play_forced()
        self.agent_selection = self.possible_agents[match.deal.to_act]
        # Chips moved before anyone acts (ante, forced turns) are paid out as rewards with the first step,
        # so every reward that last() reports is one an agent saw arrive after a step; only a match that
        # auto_forced plays to its end at once pays them here.
        if match.over:
            self._finish(self._last_events)
        else:
            self._set_infos(self._last_events)

    def step(self, action) -> None:
        if self._rng is None:
            raise EnvOrderError("reset() must be called before step()")
        if not self.agents:
            raise EnvOrderError("the game is over: every agent has finished; call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        position = None if self._signal is None else self._signal.at_lead(self._match.deal)
        events = self._match.apply(action)  # an illegal action raises before anything changes
        self._cumulative_rewards[agent] = 0.0
        self._observed = {}
        if self.auto_forced:
            events += self._play_forced()
        self._finish(events, None if position is None else (agent, self._signal.of_lead(position, int(action))))
        if self.render_mode == "human":
            self.render()

    def _play_forced(self) -> list:
        """Play every turn that has exactly one legal action (``auto_forced=True``)."""
        events = []
        match = self._match
        while not match.over:
            legal = match.deal.legal_actions()
            if len(legal) != 1:
                break
            events += match.apply(legal[0])
        return events

    def _finish(self, events: list, signal: tuple | None = None) -> None:
        """Turn the engine's new state into rewards, terminations, infos and the next agent; with the training
        signal, ``signal`` is ``(agent, its lead's advantage)`` (None: nobody led with a choice)."""
        match = self._match
        score = list(map(float, match.score))
        if self._signal is None:
            self.rewards = dict(zip(self.agents, map(operator.sub, score, self._score_seen)))
        else:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            if signal is not None:
                self.rewards[signal[0]] = signal[1]
        # The infos change only when chips move or a deal ends (unless they carry the events or the mask):
        # most turns keep the last ones, which saves building a dict per agent on every turn.
        moved = score != self._score_seen or match.deals_played != self._infos_deals
        if moved or self.info_events or self.info_action_mask:
            self._set_infos(events)
        self._score_seen = score
        self._last_events = events
        if match.over:
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self.possible_agents[match.deal.to_act]
        cumulative = self._cumulative_rewards  # PettingZoo's _accumulate_rewards, without its method lookups
        for agent, reward in self.rewards.items():
            cumulative[agent] += reward

    def _set_infos(self, events: list) -> None:
        """Every agent's info: numbers only, the same keys every step, so that RL libraries that turn infos
        into tensors (TorchRL, Tianshou) read them: the agent's chip total and the deals finished. The step's
        Event records are in :attr:`last_events` (and in infos under ``info_events=True``); AgileRL's
        convention, the action mask in the info, under ``info_action_mask=True``."""
        match = self._match
        deals = self._infos_deals = match.deals_played
        self.infos = {agent: {"chips": chips, "deals_played": deals} for agent, chips in zip(self.agents, match.chips)}
        if self.info_events:
            for info in self.infos.values():
                info["events"] = tuple(events)
        if self.info_action_mask:
            for agent, info in self.infos.items():
                info["action_mask"] = self.mask(agent)

    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() was called without a render_mode; pass 'ansi', 'human' or 'rgb_array'")
            return None
        if self._rng is None:
            raise EnvOrderError("reset() must be called before render()")
        if self.render_mode == "rgb_array":
            from .picture import table_image  # Pillow is imported only by those who draw

            return table_image(self._match, self.viewer, self._last_events)
        text = table_text(self._match, self._last_events, viewer=self.viewer)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass

"""An SB3 ``VecEnv`` over :class:`BatchEnv`: one learner seat per game, opponents evaluated in batch.

Needs stable-baselines3 (the training extras). Each of the ``num_envs`` games is a single-seat episode
as in :class:`snipsnap_env.single_agent.SingleSeatEnv`: the learner's seat is drawn per episode (or
fixed), each other seat draws a policy from the pool per episode, the other seats and every forced turn
are played between the learner's choices, and rewards are the learner's chips. ``action_masks()`` (and
``env_method("action_masks")``) give MaskablePPO the learner's legal actions. Episodes end with the deal;
a deal that ends before the learner chooses is not an episode of the learner's, and its chips are dropped.
Infos carry ``deal_score`` (the learner's chips for the finished deal) and no ``terminal_observation``:
episodes only terminate, never truncate, so SB3 never bootstraps from it.

For a critic that sees the whole deal, observations can carry more columns after the observation's, which
an actor must not read: every hand relative to the learner (``critic_state``, :mod:`snipsnap_env.state`), or
the value of each of the learner's leads in the true deal (``lead_values``, :mod:`snipsnap_env.lead_values`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from gymnasium import spaces

from .batch import BatchEnv
from .engine import NUM_ACTIONS, check_optional_seat
from .kernel import POLICIES, RANDOM, kernel_policy, policy_codes
from .kernel_network import NETWORK, Networks, network_actions, stack
from .lead_values import lead_values
from .observation import CHIP_SCALE, table_template
from .parallelism import start_in_chunks
from .state import HANDS_DIM, LEAD_VALUES_DIM, critic_bounds, hands
from .training_signal import DEFAULT_ROLLOUTS, signal_for
from .vec_tables import InProcessVecEnv, TablesVecEnv, whole_actions  # noqa: F401 (TablesVecEnv: named here too)

#: in a VecEnv's opponents: a seat the learner holds too (self-play with shared parameters)
SELF = "self"


def _is_self(member) -> bool:
    return isinstance(member, str) and member == SELF


def _plays_in_kernel(member) -> bool:
    """Whether a pool member is a network the kernel plays (``kernel_playable()``, then ``networks()``)."""
    playable = getattr(member, "kernel_playable", None)
    return bool(playable is not None and playable())


class SnipSnapVecEnv(InProcessVecEnv):
    """``num_envs`` single-seat games on one :class:`BatchEnv`.

    ``opponents``: policies with ``act_batch(obs, mask)`` (any ``agents.Policy``), and :data:`SELF` for
    seats the learner holds too (self-play with shared parameters: every learner seat's choices are steps);
    None means uniformly random legal actions drawn from this env's generator. With several learner seats a
    step's reward is the chips of the seat that chose, booked until the learner's next choice in that game:
    only a critic that ignores rewards (``lead_values``) should learn from several seats of one game.

    An opponent with ``networks()`` (a greedy rank-shared model, :class:`agents.ppo.PPOPolicy`; frozen copies
    of the learner) is played by the kernel's compiled twin of its network
    (:mod:`snipsnap_env.kernel_network`), one of its networks drawn per seat per episode: the seat plays the
    same in the game and in the rollouts. The learner's own network, for :data:`SELF` seats and
    ``rollout_policy=SELF``, is network 0, given by :meth:`set_learner` (and again after each update).

    ``lead_values`` > 0 appends the value of each legal lead in the true deal (chips / CHIP_SCALE; 0 where
    not legal), from that many rollouts per candidate lead: the learner's seats continue with
    ``rollout_policy`` (a kernel policy, or :data:`SELF`: the learner's current network, greedy), each other
    seat with its own policy in compiled code (for one the kernel does not play, search: ``rollout_policy``, or
    most_copies when that is :data:`SELF`).

    ``reward``: ``"chips"`` (the learner's chips), or ``"lead_advantage"``: each real lead's advantage over
    most_copies' in the true deal, from ``reward_rollouts`` rollouts a lead (:mod:`snipsnap_env.training_signal`).

    ``weights`` (settable) are each pool member's share of the seats; with probability ``pure`` a game's
    opponents are all one member (a table of one kind of player), else each seat draws its own.
    """

    def __init__(
        self,
        num_envs: int,
        num_players: int = 6,
        rules="scarne",
        opponents: Sequence | None = None,
        learner_seat: int | None = None,
        seed: int | None = None,
        critic_state: bool = False,
        lead_values: int = 0,
        rollout_policy: str = "most_copies",
        pure: float = 0.0,
        reward: str = "chips",
        reward_rollouts: int = DEFAULT_ROLLOUTS,
    ):
        self.batch = BatchEnv(num_envs, num_players, rules=rules, seed=seed)
        self.reward, self._signal = signal_for(reward, reward_rollouts, self.batch.rules, num_players)
        check_optional_seat("learner_seat", learner_seat, num_players)
        if opponents is not None and (
            len(opponents) == 0 or not all(hasattr(p, "act_batch") or _is_self(p) for p in opponents)
        ):
            raise ValueError(
                f"opponents must be None or a non-empty sequence of policies with act_batch(obs, mask) and {SELF!r}"
            )
        self.opponents = list(opponents) if opponents is not None else None
        if learner_seat is not None and self.opponents and any(map(_is_self, self.opponents)):
            raise ValueError(f"a fixed learner_seat and {SELF!r} in the opponents exclude each other")
        self._pool_is_self = np.array([_is_self(p) for p in self.opponents or [None]])
        self.fixed_seat = learner_seat
        self.critic_state = bool(critic_state)
        if isinstance(lead_values, bool) or not isinstance(lead_values, (int, np.integer)) or lead_values < 0:
            raise ValueError(f"lead_values got {lead_values!r}; allowed: a whole number of rollouts, 0 for none")
        self.lead_values = int(lead_values)
        if self.critic_state and self.lead_values:
            raise ValueError("give critic_state or lead_values, not both")
        if not 0.0 <= pure <= 1.0:
            raise ValueError(f"pure got {pure!r}; allowed: a probability from 0 to 1")
        self.pure = float(pure)
        self.weights = np.full(len(self.opponents or [None]), 1.0 / len(self.opponents or [None]))
        self._learner: Networks | None = None
        self.gains, self.gain_counts = np.zeros(len(self.weights)), np.zeros(len(self.weights))
        self.running_gains = None  # a trainer's memory of them (prioritised self-play): pickled with the env
        self._values = None
        self._is_network = np.array([_plays_in_kernel(p) for p in self.opponents or [None]])
        self._nets, self._offsets, self._counts = stack([]), np.zeros(len(self._is_network), np.int64), None
        self._template = table_template(self.batch.rules, num_players).astype(np.float32)
        for member, is_network in zip(self.opponents or [None], self._is_network):
            if is_network and hasattr(member, "refuse_table"):  # trained before a rule option this table sets
                member.refuse_table(self._template)
        self._rollout_self = _is_self(rollout_policy)
        self._rollout_code = NETWORK if self._rollout_self else int(policy_codes([rollout_policy])[0])
        self._opponent_codes = self._kernel_twins(self.opponents, self._rollout_code)
        # every pool member a scripted kernel policy: the other seats play in one compiled call per step
        self._scripted_codes = self._opponent_codes if self._all_scripted(self.opponents) else None
        extra = HANDS_DIM if self.critic_state else LEAD_VALUES_DIM if self.lead_values else 0
        low, high = critic_bounds(extra)
        observation_space = spaces.Box(low, high, dtype=np.float32)
        self.num_envs, self.render_mode = num_envs, None  # read by VecEnv.__init__ through get_attr
        super().__init__(num_envs, observation_space, spaces.Discrete(NUM_ACTIONS))
        self.learner_seat = np.zeros(num_envs, np.int64)
        self._seat_policy = np.zeros((num_envs, num_players), np.int64)  # index into the pool per seat
        self._seat_copy = np.zeros((num_envs, num_players), np.int64)  # which of a network member's networks
        self._learns = np.zeros((num_envs, num_players), bool)  # the seats the learner holds
        self._carry = np.zeros(num_envs)  # the learner's chips from before its first choice of an episode
        self._actions = np.zeros(num_envs, np.int64)
        self._obs = self._mask = None
        self._seed(seed, opponents=seed is not None)  # unseeded: the opponents keep the streams they came with

    # ---- VecEnv ---------------------------------------------------------------------------------------
    def seed(self, seed: int | None = None):
        """Restart every random stream of the env from ``seed``: the deals, the learner's seats, which
        opponent sits where, and each opponent policy's own generator (``reseed``); the next ``reset``
        starts from it, so two rollouts after the same ``seed`` are the same rollout."""
        self._seed(seed, opponents=True)
        return [seed] * self.num_envs

    def _seed(self, seed: int | None, opponents: bool) -> None:
        pool = len(self.opponents or ())
        streams = np.random.SeedSequence(seed).spawn(3 + pool)  # the signal's last: the others' stay as they were
        self.batch.seed(int(streams[0].generate_state(1)[0]))
        self.rng = np.random.default_rng(streams[1])
        if self._signal is not None:
            self._signal.seed(streams[-1])
        if opponents:
            for policy, stream in zip(self.opponents or (), streams[2 : 2 + pool]):
                if hasattr(policy, "reseed"):
                    policy.reseed(int(stream.generate_state(1)[0]))

    def reset(self):
        if self._counts is None:  # the pool's networks, as they are now (snapshots are taken after construction)
            self.sync_networks()
        obs, mask = self.batch.reset()
        self._new_episodes(np.arange(self.num_envs))
        self._carry[:] = 0.0
        done = np.ones(self.num_envs, bool)  # nothing of this reset belongs to an earlier transition
        self._obs, self._mask = self._play_others(
            obs, mask, np.zeros(self.num_envs), done, [{} for _ in range(self.num_envs)]
        )
        return self._with_state(self._obs)

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = whole_actions(actions, self.num_envs)

    def step_wait(self):
        return self._finish_step(self._begin_step())

    def _begin_step(self) -> tuple:
        """A step, to the learner's next choice in every game, with the critic's rollouts of that position begun
        on the pool's threads (:class:`TablesVecEnv` steps its other tables meanwhile): :meth:`_finish_step`
        waits for them."""
        if self.lead_values:
            self._book_gains()
        rewards = self._carry.copy()
        self._carry[:] = 0.0
        if self._signal is not None:  # the leads' advantages instead of the chips (infos still report them)
            rewards = self._signal.of(self.batch.games.state, np.arange(self.num_envs), self._mask, self._actions)
        dones = np.zeros(self.num_envs, bool)
        infos = [{} for _ in range(self.num_envs)]
        step = self.batch.step(self._actions)
        self._collect(step, rewards, dones, infos)
        self._obs, self._mask = self._play_others(step[0], step[1], rewards, dones, infos)
        return self._begin_state(self._obs), rewards.astype(np.float32), dones, infos

    @staticmethod
    def _finish_step(begun: tuple):
        with_state, *rest = begun
        return with_state(), *rest

    def _with_state(self, obs: np.ndarray) -> np.ndarray:
        """``obs``, followed with ``critic_state`` by every hand relative to the learner's seat, with
        ``lead_values`` by the value of each lead in the true deal: what a critic that sees the whole deal
        reads (an actor reads the first OBS_DIM columns only)."""
        return self._begin_state(obs)()

    def _begin_state(self, obs: np.ndarray) -> Callable[[], np.ndarray]:
        """:meth:`_with_state` as a function to call for it, the lead values' rollouts running meanwhile."""
        if self.critic_state:
            full = np.concatenate([obs, hands(self.batch.games.holding, self.learner_seat)], axis=1)
            return lambda: full
        if not self.lead_values:
            return lambda: obs
        values = self.begin_values_of_leads()

        def with_values() -> np.ndarray:
            self._values = self._wait_for_values(values)
            return np.concatenate([obs, np.nan_to_num(self._values / CHIP_SCALE)], axis=1)

        return with_values

    def _wait_for_values(self, values: Callable[[], np.ndarray]) -> np.ndarray:
        return values()  # (a method of its own: train.bench_training times the critic's wait)

    def _book_gains(self) -> None:
        """Add what each real lead chosen now gains over most_copies' lead, by the lead values (chips), to
        every pool member seated at that game: ``gains`` (sums) and ``gain_counts``, read by opponent
        prioritisation (prioritised fictitious self-play) and reset by it."""
        values, actions = self._values, self._actions
        legal = ~np.isnan(values)
        choice = legal.sum(axis=1) > 1
        choice &= actions < LEAD_VALUES_DIM
        if not choice.any():
            return
        games = np.flatnonzero(choice)
        held = self.batch.games.holding[games, self.learner_seat[games]].astype(float)
        most = np.where(legal[games], held, -1.0).argmax(axis=1)  # equally held ranks share one value
        gain = values[games, actions[games]] - values[games, most]
        rows = np.arange(len(games))
        members = self._seat_policy[games]
        present = np.zeros((len(games), len(self.weights) + 1), bool)
        members = np.where(np.arange(members.shape[1]) == self.learner_seat[games, None], -1, members)
        present[rows[:, None], members] = True  # -1: the choosing seat's own draw, in the spare last column
        present = present[:, :-1]
        self.gains += (present * gain[:, None]).sum(axis=0)
        self.gain_counts += present.sum(axis=0)

    def values_of_leads(self) -> np.ndarray:
        """(num_envs, 13) chips the learner makes from now after each legal lead (NaN where not legal), from
        ``lead_values`` rollouts of the true deal per candidate (:func:`snipsnap_env.lead_values.lead_values`)."""
        return self.begin_values_of_leads()()

    def begin_values_of_leads(self) -> Callable[[], np.ndarray]:
        """:meth:`values_of_leads` begun on the pool's threads (:func:`snipsnap_env.parallelism.start_in_chunks`):
        the function returned waits for them and returns them. Until then this table must not step: the rollouts
        read its games as they are."""
        if self._learner is None and self._needs_learner():
            raise RuntimeError("the rollouts seat the learner's network: set_learner() first")
        games = self.batch.games
        policies = self.seat_codes()  # the learner's other seats (SELF) play its network, as at the table
        policies[np.arange(self.num_envs), self.learner_seat] = self._rollout_code
        values = np.empty((self.num_envs, LEAD_VALUES_DIM))
        seeds = self.rng.integers(0, 2**63, size=self.num_envs, dtype=np.uint64)
        state = (games.holding, games.hand_size, games.played, games.public, games.deal_score, self.learner_seat,
                 policies)  # fmt: skip

        def chunk(lo, hi):  # games lo:hi, each with its own seeds: the chunks give what one call gives
            rows = [array[lo:hi] for array in state]
            return (*rows, self.lead_values, seeds[lo:hi], self.batch._rule_codes, values[lo:hi], self._nets,
                    self._template)  # fmt: skip

        # about three candidate leads a game: ~10 ms a call in training, on threads that sleep while they wait
        wait = start_in_chunks(lead_values.serial, self.num_envs, chunk, 3 * self.num_envs * self.lead_values)

        def finished() -> np.ndarray:
            wait()
            return values

        return finished

    def seat_codes(self) -> np.ndarray:
        """(num_envs, num_players) the kernel policy of every seat as the games are seated (the learner's
        seats: :data:`SELF`'s network 0)."""
        codes = self._opponent_codes[self._seat_policy]  # a copy
        networks = self._is_network[self._seat_policy]
        codes[networks] = NETWORK + self._offsets[self._seat_policy[networks]] + self._seat_copy[networks]
        codes[self._learns] = NETWORK
        return codes

    # ---- the networks at the table ---------------------------------------------------------------------
    def set_learner(self, networks: Networks) -> None:
        """The learner's network as the kernel plays it (a stack of one): for :data:`SELF` seats in the
        rollouts and ``rollout_policy=SELF``. Call it again after each update of the learner."""
        self._learner = networks
        self.sync_networks()

    def sync_networks(self) -> None:
        """Rebuild the stack of networks the table plays (the learner's, then each network member's, whose
        count may have grown: frozen copies of the learner)."""
        if self._learner is None and self._needs_learner():
            raise RuntimeError("this table seats the learner's network: set_learner() first")
        members = [
            m.networks() if is_network else None for m, is_network in zip(self.opponents or [None], self._is_network)
        ]
        if any(nets is not None and len(nets.ctx_b) == 0 for nets in members):
            raise RuntimeError("a network member of the pool holds no network yet")
        self._counts = np.array([0 if nets is None else len(nets.ctx_b) for nets in members], np.int64)
        self._offsets = 1 + np.concatenate([[0], np.cumsum(self._counts)[:-1]]).astype(np.int64)
        parts = [nets for nets in members if nets is not None]
        learner = self._learner
        if learner is None:  # network 0 then plays no seat: zeros of the members' sizes hold its place
            learner = Networks(*(np.zeros_like(array[:1]) for array in parts[0])) if parts else None
        self._nets = stack([learner, *parts]) if learner is not None else stack([])

    def _needs_learner(self) -> bool:
        return bool(self.lead_values) and (self._rollout_self or bool(self._pool_is_self.any()))

    @staticmethod
    def _kernel_twins(opponents, rollout_code: int) -> np.ndarray:
        """The kernel policy code of each opponent in the pool, which the rollouts play in compiled code;
        ``rollout_code`` for one the kernel does not play."""
        if opponents is None:
            return np.array([RANDOM], np.int64)
        names = [kernel_policy(policy) for policy in opponents]  # by what each is, never by its name
        # one the kernel does not play (search) continues as the learner does, or as most_copies if that is a network
        fallback = POLICIES.index("most_copies") if rollout_code >= NETWORK else rollout_code
        return np.array([fallback if n is None else POLICIES.index(n) for n in names], np.int64)

    @staticmethod
    def _all_scripted(opponents) -> bool:
        """Whether every pool member is a scripted policy the kernel plays (its twin in ``_kernel_twins`` is
        itself) or :data:`SELF`, whose seats the learner holds; not a network, the search or a caller's own."""
        return opponents is None or all(
            _is_self(p) or (kernel_policy(p) is not None and not _plays_in_kernel(p)) for p in opponents
        )

    def action_masks(self) -> np.ndarray:
        """(num_envs, 14) bool: the learner's legal actions in each game."""
        return self._mask.astype(bool)

    # ---- playing the other seats ----------------------------------------------------------------------
    def _play_others(self, obs, mask, rewards, dones, infos):
        """Step every game where another seat is to choose, until the learner chooses everywhere: in compiled
        code when every pool member is a scripted kernel policy (a step ends there only at a deal's end, where
        the next episode is seated), else one Python step per turn."""
        while True:
            to_act = self.batch.to_act
            others = ~self._learns[np.arange(self.num_envs), to_act]
            if not others.any():
                self.learner_seat[:] = to_act  # the learner's seat that chooses now
                return obs, mask
            if self._scripted_codes is not None:
                step = self.batch.play_others(self._learns, self._scripted_codes[self._seat_policy])
            else:
                step = self.batch.step(self._opponent_actions(obs, mask, others), active=others)
            self._collect(step, rewards, dones, infos)
            obs, mask = step[0], step[1]

    def _opponent_actions(self, obs, mask, others) -> np.ndarray:
        actions = np.zeros(self.num_envs, np.int64)
        games = np.flatnonzero(others)
        if self.opponents is None:
            noise = self.rng.random((len(games), NUM_ACTIONS))
            actions[games] = np.where(mask[games] > 0, noise, -1.0).argmax(axis=1)
            return actions
        seats = self.batch.to_act[games]
        chosen = self._seat_policy[games, seats]
        for index, policy in enumerate(self.opponents):
            at = chosen == index
            sel = games[at]
            if not sel.size:
                continue
            if self._is_network[index]:  # the network the rollouts play too, in compiled code
                which = self._offsets[index] + self._seat_copy[sel, seats[at]]
                actions[sel] = network_actions(obs[sel], mask[sel], which, self._nets, self.rng.random(len(sel)))
            else:
                actions[sel] = policy.act_batch(obs[sel], mask[sel])
        return actions

    def _collect(self, step, rewards, dones, infos) -> None:
        """Book the learner's rewards of one BatchEnv step to its open transition or to the next episode."""
        _, _, batch_rewards, ended, batch_infos = step
        if self._signal is None:
            mine = batch_rewards[np.arange(self.num_envs), self.learner_seat]
        else:  # the signal was paid at the choice: no chips booked
            mine = np.zeros(self.num_envs)
        open_ = ~dones
        rewards[open_] += mine[open_]
        self._carry[~open_] += mine[~open_]
        for b in np.flatnonzero(ended & open_):  # the learner's episode ends with its deal
            infos[b]["deal_score"] = float(batch_infos["deal_score"][b, self.learner_seat[b]])
            infos[b]["learner_seat"] = int(self.learner_seat[b])
        self._carry[ended & ~open_] = 0.0  # a deal the learner never chose in: not its episode
        dones |= ended
        self._new_episodes(np.flatnonzero(ended))

    def _new_episodes(self, games: np.ndarray) -> None:
        n = self.batch.num_players
        if self.fixed_seat is None:
            self.learner_seat[games] = self.rng.integers(n, size=len(games))
        else:
            self.learner_seat[games] = self.fixed_seat
        if self.opponents is not None:
            self._seat_policy[games] = self._draw_seats(len(games), n)
            if self._counts is not None:
                count = np.maximum(self._counts[self._seat_policy[games]], 1)
                self._seat_copy[games] = (self.rng.random((len(games), n)) * count).astype(np.int64)
        self._learns[games] = self._pool_is_self[self._seat_policy[games]]
        self._learns[games, self.learner_seat[games]] = True

    def _draw_seats(self, games: int, n: int) -> np.ndarray:
        """Pool members for ``games`` × ``n`` seats by ``weights``: one for a whole table with probability
        ``pure``, else one per seat."""
        p = self.weights / self.weights.sum()
        seats = self.rng.choice(len(p), size=(games, n), p=p)
        pure = self.rng.random(games) < self.pure
        seats[pure] = seats[pure, :1]
        return seats

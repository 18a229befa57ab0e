"""Distillation from the search player: label positions with PIMC's choice and fit a policy network to them.

Why: a lead choice is worth 0.3–4 chips per deal over most_copies, while one deal's chips spread by about
15; PPO's advantage estimates see that noise in every sample, while the search player compares the
candidates on the same sampled worlds (common random numbers), where the noise cancels. So the network
learns the search player's values of the candidate leads by supervised regression (its logits, centred,
to the values, centred), over every table size at once; DAgger-style rounds then label the positions the
learned policy itself reaches. ``python -m train.train_ppo --teacher pimc:128``
runs it before PPO (which may then fine-tune).

    python -m train.train_ppo --teacher pimc:128 --teacher-positions 200000 --total-timesteps 0
"""

from __future__ import annotations

import numpy as np

import agents
from agents.model_search import ModelSearch
from agents.pimc import PIMC, candidates_by_copies
from agents.scripted import hand_counts
from snipsnap_env.batch import BatchEnv
from snipsnap_env.cards import CARDS_PER_RANK, NUM_RANKS
from snipsnap_env.engine import NUM_ACTIONS
from snipsnap_env.kernel import POLICIES, policy_codes
from snipsnap_env.rules import MAX_PLAYERS

from ..runner.cli import progress_bar
from .live_policy import LivePolicy
from .opponents import make_opponent


def teacher_from_spec(spec: str, seed: int, pool: list | None = None) -> PIMC | ModelSearch:
    """``pimc:<samples>[:<opponent model>]`` as a search player; ``model_search:<samples>`` as a
    :class:`~agents.model_search.ModelSearch` whose worlds seat the policies of ``pool`` as they are really
    seated round each position (any agents: learned ones too; random lead choice without a pool)."""
    parts = spec.split(":")
    well_formed = len(parts) == 1 or parts[1].isdigit()
    if parts[0] == "model_search" and len(parts) <= 2 and well_formed:
        models = pool or [agents.make("random", seed=seed + 1)]
        return ModelSearch(models, samples=int(parts[1]) if len(parts) > 1 else 64, seed=seed)
    if parts[0] != "pimc" or len(parts) > 3 or not well_formed:
        raise ValueError(
            f"teacher {spec!r}: write pimc:<samples>, e.g. pimc:128 or pimc:128:most_copies, or model_search:<samples>"
        )
    model = parts[2] if len(parts) == 3 else "random"
    return PIMC(samples=int(parts[1]) if len(parts) > 1 else 128, opponent_model=model, seed=seed)


def real_choices(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Rows where the legal leads hold ranks in more than one copy count: a choice that matters."""
    return candidates_by_copies(hand_counts(obs), mask[:, :NUM_RANKS] > 0).sum(axis=1) > 1


def collect_positions(
    num_players: int, rules: str, count: int, pool: list, seed: int, learner=None, games: int = 1024
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` decision positions (obs, mask, seated) with a real choice, from deals where every seat's policy
    is drawn from ``pool`` per deal (and, with ``learner``, the learner leads in one seat per game);
    ``seated[i, k - 1]`` is the pool index of the policy in the position's relative seat k."""
    env = BatchEnv(games, num_players, rules=rules, seed=seed)
    rng = np.random.default_rng(seed)
    seat_policy = rng.integers(len(pool), size=(games, num_players))
    learner_seat = rng.integers(num_players, size=games)
    obs, mask = env.reset()
    kept_obs, kept_mask, kept_seated, kept = [], [], [], 0
    relative = np.arange(1, MAX_PLAYERS)
    while kept < count:
        to_act = env.to_act
        by_learner = (to_act == learner_seat) if learner is not None else np.zeros(games, bool)
        keep = real_choices(obs, mask)
        if learner is not None:  # DAgger: the positions the learner itself reaches
            keep &= by_learner
        kept_obs.append(obs[keep])
        kept_mask.append(mask[keep])
        rows = np.flatnonzero(keep)
        kept_seated.append(seat_policy[rows[:, None], (to_act[rows, None] + relative) % num_players])
        kept += int(keep.sum())
        actions = np.zeros(games, np.int64)
        chosen = seat_policy[np.arange(games), to_act]
        for index, policy in enumerate(pool):
            rows = np.flatnonzero((chosen == index) & ~by_learner)
            if rows.size:
                actions[rows] = policy.act_batch(obs[rows], mask[rows])
        if by_learner.any():
            actions[by_learner] = learner.act_batch(obs[by_learner], mask[by_learner])
        obs, mask, _, dones, _ = env.step(actions)
        redraw = np.flatnonzero(dones)
        seat_policy[redraw] = rng.integers(len(pool), size=(len(redraw), num_players))
        learner_seat[redraw] = rng.integers(num_players, size=len(redraw))
    return tuple(np.concatenate(kept)[:count] for kept in (kept_obs, kept_mask, kept_seated))


def label(teacher, obs: np.ndarray, mask: np.ndarray, opponents=None, chunk: int = 4096, progress=None):
    """The teacher's value of every legal lead (B, 14) — its mean chips, shared by the interchangeable ranks
    of one copy count, 0 elsewhere — and its value gap between its choice and most_copies' (B,).
    ``opponents``: the policies really seated round each position (the teacher's ``scores``: kernel codes
    for PIMC, indices into its models for ModelSearch), or None."""
    values = np.zeros((len(obs), NUM_ACTIONS), np.float32)
    gaps = np.zeros(len(obs))
    own = hand_counts(obs).astype(int)
    for start in range(0, len(obs), chunk):
        part = slice(start, start + chunk)
        scores = teacher.scores(obs[part], mask[part], None if opponents is None else opponents[part])
        rows = np.arange(len(scores))
        by_count = np.full((len(scores), CARDS_PER_RANK + 1), np.nan)  # the candidate's value per copy count
        candidate = ~np.isnan(scores)
        r, rank = np.nonzero(candidate)
        by_count[r, own[part][r, rank]] = scores[r, rank]
        legal = mask[part][:, :NUM_RANKS] > 0
        values[part, :NUM_RANKS] = np.where(legal, np.nan_to_num(by_count[rows[:, None], own[part]]), 0.0)
        best = np.nanargmax(scores, axis=1)
        most_copies = np.where(candidate, own[part], -1).argmax(axis=1)  # one candidate per count
        gaps[part] = scores[rows, best] - scores[rows, most_copies]
        if progress is not None:
            progress(len(scores))
    return values, gaps


def fit(
    policy,
    obs,
    mask,
    values,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    loss="choice",
    log=print,
    progress: bool = False,
):
    """Fit the policy to the teacher. ``loss="choice"``: cross-entropy to the teacher's choice (its best
    copy count, spread evenly over that count's legal ranks). ``loss="values"``: advantage regression, the
    policy's logits of the legal leads, centred, to the teacher's values, centred (softmax is blind to a
    shift). Returns the share of positions where the greedy action is one the teacher values best."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    obs_t, mask_t = torch.as_tensor(obs), torch.as_tensor(mask > 0)
    values_t = torch.as_tensor(values)
    legal_t = mask_t.float()
    best_t = torch.where(mask_t, values_t, torch.full_like(values_t, -1e9)).max(dim=1, keepdim=True).values
    # classes: the legal ranks held once, twice, … (interchangeable); the teacher's choice is one class
    own = torch.as_tensor(hand_counts(obs)).long()
    classes_t = torch.stack([mask_t[:, :NUM_RANKS] & (own == c) for c in range(1, CARDS_PER_RANK + 1)], dim=1)
    chosen_t = torch.stack([(values_t[:, :NUM_RANKS] >= best_t) & m for m in classes_t.unbind(1)], 1).any(2)
    policy.set_training_mode(True)
    for epoch in range(epochs):
        order = torch.randperm(len(obs_t), generator=generator)
        total = 0.0
        starts = range(0, len(order), batch_size)
        for start in progress_bar(
            starts, desc=f"fitting epoch {epoch + 1}/{epochs}", leave=False, disable=not progress
        ):
            rows = order[start : start + batch_size]
            logits = policy.action_net(policy.mlp_extractor.forward_actor(policy.extract_features(obs_t[rows])))
            legal = legal_t[rows]
            if loss == "choice":  # a class's logit is the mean of its ranks' in probability, so no class is
                # favoured for having more ranks and the greedy rank lies in the likeliest class
                members = classes_t[rows]
                rank_logits = logits[:, None, :NUM_RANKS].expand(-1, CARDS_PER_RANK, -1).masked_fill(~members, -1e9)
                size = members.sum(dim=2).clamp(min=1)
                class_logits = torch.logsumexp(rank_logits, dim=2) - torch.log(size.float())
                class_logits = class_logits.masked_fill(~members.any(dim=2), -1e9)
                error = -(torch.log_softmax(class_logits, dim=1) * chosen_t[rows]).sum(dim=1).mean()
            else:
                count = legal.sum(dim=1, keepdim=True)
                centred = logits - (logits * legal).sum(dim=1, keepdim=True) / count
                target = values_t[rows]
                wanted = target - (target * legal).sum(dim=1, keepdim=True) / count
                error = (((centred - wanted) ** 2) * legal).sum(dim=1).div(count.squeeze(1)).mean()
            optimizer.zero_grad()
            error.backward()
            optimizer.step()
            total += float(error.detach()) * len(rows)
        log(f"distill epoch {epoch + 1}/{epochs}: {loss} loss {total / len(order):.4f}")
    policy.set_training_mode(False)
    with torch.no_grad():
        greedy = policy.get_distribution(obs_t, action_masks=mask_t.numpy()).distribution.probs.argmax(dim=1)
    return float((values_t[torch.arange(len(greedy)), greedy] >= best_t[:, 0]).float().mean())


def distill(model, args, log=print) -> dict:
    """Pretrain ``model``'s policy on the teacher's choices over ``args.teacher_players`` (and DAgger rounds);
    return diagnostics: accuracy per round and the teacher's mean value gap over most_copies."""

    pool = [make_opponent(name, args.seed + 1 + i) for i, name in enumerate(args.teacher_opponents)]
    models = None  # a model_search teacher's own copies of the opponents (their streams apart from the table's)
    if args.teacher.startswith("model_search"):
        models = [make_opponent(name, args.seed + 101 + i) for i, name in enumerate(args.teacher_opponents)]
    teacher = teacher_from_spec(args.teacher, args.seed, models)
    # the teacher models each opponent as the policy seated there: any policy for model_search (its
    # index in the pool), when the kernel can play them all for pimc (its kernel code)
    if isinstance(teacher, ModelSearch):
        seated_codes = np.arange(len(pool))
    else:
        seated = set(args.teacher_opponents) <= set(POLICIES)
        seated_codes = policy_codes(args.teacher_opponents) if seated else None
    sizes = list(args.teacher_players)
    per_table = max(args.teacher_positions // (len(sizes) * (1 + args.teacher_rounds)), 1)
    data_obs, data_mask, data_values, report = [], [], [], {"rounds": []}
    for round_ in range(1 + args.teacher_rounds):
        learner = None if round_ == 0 else LivePolicy(model, seed=args.seed * 1000 + round_)
        if round_ == 0 and args.progress:
            log("labelling positions (a fresh install first compiles the rules kernel: up to 2 minutes at 0%)")
        bar = progress_bar(total=per_table * len(sizes), desc=f"labelling (round {round_})", disable=not args.progress)
        gaps = []
        for n in sizes:
            seed = args.seed * 1000 + round_ * 10 + n
            obs, mask, seated = collect_positions(n, args.rules, per_table, pool, seed, learner=learner)
            opponents = None if seated_codes is None else seated_codes[seated]
            values, gap = label(teacher, obs, mask, opponents, progress=bar.update)
            data_obs.append(obs)
            data_mask.append(mask)
            data_values.append(values)
            gaps.append(float(gap.mean()))
        bar.close()
        accuracy = fit(
            model.policy,
            np.concatenate(data_obs),
            np.concatenate(data_mask),
            np.concatenate(data_values),
            args.teacher_epochs,
            1024,
            args.teacher_learning_rate,
            args.seed + round_,
            loss=args.teacher_loss,
            log=log,
            progress=args.progress,
        )
        report["rounds"].append({"positions": int(sum(len(o) for o in data_obs)), "accuracy": accuracy})
        report["teacher_gap_by_players"] = dict(zip(map(str, sizes), gaps))
        log(f"distill round {round_}: {report['rounds'][-1]}")
    return report

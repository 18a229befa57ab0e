"""Evaluate policies on paired deals: chips per deal with 95% confidence intervals, and each policy's
paired difference to a reference.

Every candidate plays the same deals — identical hands and dealers, the same seat (rotated over the
deals), the same opponents with identically seeded random streams — so the luck of the cards cancels in
the differences. Runs on the batched engine.

    python -m train.evaluate --candidates random most_copies fewest_copies control ppo --deals 20000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

import agents
from agents.scripted import kernel_name
from snipsnap_env.batch import BatchEnv, play_given_deals
from snipsnap_env.cards import NUM_CARDS
from snipsnap_env.kernel import POLICIES
from snipsnap_env.rules import PRESETS, check_num_players

from .cli import add_flag, add_table_flags, new_parser, progress_bar
from .results_folder import csv_of, pyplot, results_folder
from .run_folder import Refused

Z95 = 1.959964


@dataclass(frozen=True)
class PairedDeals:
    """The deals every candidate plays: who holds each card, the dealer, the candidate's seat, and which
    opponent from the pool sits in each other seat."""

    owners: np.ndarray  # (D, 52)
    dealers: np.ndarray  # (D,)
    seats: np.ndarray  # (D,)
    opponent_index: np.ndarray  # (D, N)

    @classmethod
    def draw(cls, num_deals: int, num_players: int, pool_size: int, seed: int) -> "PairedDeals":
        """``num_deals`` shuffled deals from ``seed``; the candidate's seat cycles round the table."""
        rng = np.random.default_rng(seed)
        dealers = rng.integers(num_players, size=num_deals)
        pack = rng.random((num_deals, NUM_CARDS)).argsort(axis=1)
        owners = np.empty((num_deals, NUM_CARDS), np.int64)
        np.put_along_axis(owners, pack, (dealers[:, None] + 1 + np.arange(NUM_CARDS)) % num_players, axis=1)
        seats = np.arange(num_deals) % num_players
        opponent_index = rng.integers(pool_size, size=(num_deals, num_players))
        return cls(owners, dealers, seats, opponent_index)


def play_paired(
    candidate, opponents: list, deals: PairedDeals, rules: str, chunk: int = 8192, progress=None, seed: int = 0
) -> np.ndarray:
    """The candidate's chips (points with chips off) in each deal, playing ``deals.seats``.

    When every policy is one the kernel plays itself, whole deals run in the kernel (``play_given_deals``,
    each seat drawing from its own stream); otherwise the batched engine steps lead by lead with the
    policies' ``act_batch`` between steps.
    """
    num_deals, num_players = deals.opponent_index.shape
    names = [kernel_name(policy) for policy in (candidate, *opponents)]
    if None not in names:
        table = np.array(names[1:], dtype=object)[deals.opponent_index]
        table[np.arange(num_deals), deals.seats] = names[0]
        chips = play_given_deals(deals.owners, deals.dealers, table.astype(str), rules, seed=seed)
        if progress is not None:
            progress(num_deals)
        return chips[np.arange(num_deals), deals.seats]
    result = np.zeros(num_deals)
    for start in range(0, num_deals, chunk):
        part = slice(start, min(start + chunk, num_deals))
        result[part] = _play_chunk(
            candidate,
            opponents,
            deals.owners[part],
            deals.dealers[part],
            deals.seats[part],
            deals.opponent_index[part],
            num_players,
            rules,
        )
        if progress is not None:
            progress(part.stop - part.start)
    return result


def play_candidates(
    policies: dict, opponents: list[str], deals: PairedDeals, rules: str, seed: int, chunk: int = 8192, progress=None
) -> dict[str, np.ndarray]:
    """Every policy's chips on the same ``deals``, each reseeded with ``seed`` and meeting opponents made
    afresh with the same streams, so their differences are paired."""
    results = {}
    for spec, policy in policies.items():
        policy.reseed(seed)
        pool = [agents.make(name, seed=seed + 1 + i) for i, name in enumerate(opponents)]
        results[spec] = play_paired(policy, pool, deals, rules, chunk=chunk, progress=progress, seed=seed)
    return results


def _play_chunk(candidate, opponents, owners, dealers, seats, opponent_index, num_players, rules):
    env = BatchEnv(len(seats), num_players, rules=rules)
    lead = lambda env, rows, obs, mask: candidate.act_batch(obs, mask)  # noqa: E731
    return play_seated(env, env.reset(owners=owners, dealers=dealers), seats, lead, opponents, opponent_index)


def play_seated(env: BatchEnv, start, seats, lead, opponents: list, opponent_index) -> np.ndarray:
    """Play every deal of ``env`` (dealt, at ``start = (obs, mask)``) to its end; return the chips of the seat
    ``seats[b]`` in each. ``lead(env, rows, obs, mask)`` chooses that seat's leads in games ``rows``;
    ``opponents[opponent_index[b, s]]`` leads for seat ``s`` elsewhere."""
    obs, mask = start
    games = len(seats)
    finished = np.zeros(games, bool)
    chips = np.zeros(games)
    rows = np.arange(games)
    while not finished.all():
        live = ~finished
        to_act = env.to_act
        actions = np.zeros(games, np.int64)
        mine = live & (to_act == seats)
        if mine.any():
            actions[mine] = lead(env, np.flatnonzero(mine), obs[mine], mask[mine])
        theirs = opponent_index[rows, to_act]
        for index, policy in enumerate(opponents):
            sel = live & ~mine & (theirs == index)
            if sel.any():
                actions[sel] = policy.act_batch(obs[sel], mask[sel])
        obs, mask, _, dones, infos = env.step(actions, active=live)
        ended = dones & live
        chips[ended] = infos["deal_score"][ended, seats[ended]]
        finished |= ended
    return chips


@dataclass
class Row:
    """One candidate's result, and its paired difference to one reference."""

    name: str
    chips_per_deal: float
    ci95: float
    reference: str
    diff_vs_reference: float
    diff_ci95: float
    deals: int


def summarise(results: dict[str, np.ndarray], reference: str) -> list[Row]:
    """Mean and 95% CI per candidate, and the paired difference to ``reference`` with its CI."""
    rows = []
    base = results[reference]
    for name, chips in results.items():
        n = len(chips)
        diff = chips - base
        rows.append(
            Row(
                name,
                float(chips.mean()),
                Z95 * float(chips.std(ddof=1)) / np.sqrt(n),
                reference,
                float(diff.mean()),
                Z95 * float(diff.std(ddof=1)) / np.sqrt(n),
                n,
            )
        )
    return rows


def format_table(rows: list[Row]) -> str:
    """A markdown table of rows that share one reference."""
    lines = [
        f"| policy | chips per deal (95% CI) | paired difference vs {rows[0].reference} (95% CI) | deals |",
        "|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | {row.chips_per_deal:+.3f} ± {row.ci95:.3f} | "
            f"{row.diff_vs_reference:+.3f} ± {row.diff_ci95:.3f} | {row.deals:,} |"
        )
    return "\n".join(lines)


def save_results(tables: list[list[Row]], folder, title: str) -> None:
    """Write results.md, .csv, .json and results.png (the first table as a bar chart with 95% CIs) into
    ``folder`` (a train.results_folder)."""
    out_dir = folder.path
    rows = [row for table in tables for row in table]
    markdown = title + "\n\n" + "\n\n".join(format_table(t) for t in tables) + "\n"
    folder.write(out_dir / "results.md", lambda p: p.write_text(markdown))
    folder.write(out_dir / "results.csv", csv_of([asdict(row) for row in rows]))
    folder.write(out_dir / "results.json", lambda p: p.write_text(json.dumps([asdict(row) for row in rows], indent=2)))
    plt = pyplot()
    if plt is None:
        return
    rows, reference = tables[0], tables[0][0].reference
    fig, ax = plt.subplots(figsize=(1.6 * len(rows) + 2, 4))
    names = [row.name for row in rows]
    ax.bar(
        names,
        [row.diff_vs_reference for row in rows],
        yerr=[row.diff_ci95 for row in rows],
        capsize=6,
        color=["tab:gray" if row.name == reference else "tab:blue" for row in rows],
    )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel(f"chips per deal vs {reference} (paired, 95% CI)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    folder.write(out_dir / "results.png", lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)


TRUST_HELP = (
    "also load ppo:<file> models that are Stable-Baselines3 zips: SB3 unpickles them, which runs any code in "
    "the file, so use this only for files from a source you trust"
)


def make_candidate(spec: str, seed: int, opponents: tuple[str, ...] = (), trust_model: bool = False):
    """``name``, ``ppo:path/to/model.zip`` or ``pimc:<samples>``; pimc models the opponents as they play
    when they are one policy the kernel plays, else as random. ``trust_model`` lets ``ppo:`` load a
    Stable-Baselines3 zip (which runs the file's pickled code)."""
    name, _, option = spec.partition(":")
    if name == "ppo":
        return agents.make("ppo", path=option or None, seed=seed, trust=trust_model)
    if name == "pimc":
        if option and not option.isdigit():
            raise ValueError(f"candidate {spec!r}: write pimc:<samples>, e.g. pimc:128")
        model = opponents[0] if len(set(opponents)) == 1 and opponents[0] in POLICIES else "random"
        return agents.make("pimc", samples=int(option or 128), opponent_model=model, seed=seed)
    if option:
        raise ValueError(f"candidate {spec!r}: only ppo:<model.zip> and pimc:<samples> take an option")
    return agents.make(name, seed=seed)


def evaluate(
    candidates: list[str],
    opponents: list[str],
    num_players: int = 6,
    rules: str = "scarne",
    deals: int = 20000,
    seed: int = 0,
    reference: str = "random",
    compare_to: tuple[str, ...] = (),
    chunk: int = 8192,
    out_dir: str | None = None,
    quiet: bool = False,
    overwrite: bool = False,
    argv: list[str] | None = None,
    trust_model: bool = False,
    folder=None,
) -> list[Row]:
    """Play every candidate on the same paired deals; print and (with ``out_dir``) save the results.

    Returns the rows against ``reference``; ``compare_to`` adds a table of differences to each of
    those candidates too. ``out_dir=""`` writes to ``results/evaluate/<settings hash>``; an existing folder
    is rewritten only if it holds this job's results for the same settings, or with ``overwrite``
    (train.results_folder); ``argv`` is the command line recorded in its provenance. ``folder``: write into
    this results folder, already open, instead.
    """
    check_num_players(num_players)
    if deals < 2:
        raise ValueError(f"deals got {deals}; allowed: at least 2 (a confidence interval needs two)")
    if rules not in PRESETS:
        raise ValueError(f"unknown rules preset {rules!r}; known presets: {', '.join(PRESETS)}")
    for name in (reference, *compare_to):
        if name not in candidates:
            candidates = [name, *candidates]
    # fail early on a bad name or file
    policies = {spec: make_candidate(spec, seed, tuple(opponents), trust_model) for spec in candidates}
    if folder is not None:
        tables, title = _measure(
            policies, opponents, num_players, rules, deals, seed, (reference, *compare_to), chunk, quiet
        )
        save_results(tables, folder, title)
        return tables[0]
    if out_dir is None:
        return _measure(policies, opponents, num_players, rules, deals, seed, (reference, *compare_to), chunk, quiet)[
            0
        ][0]
    settings = {
        "candidates": list(candidates),
        "opponents": list(opponents),
        "players": num_players,
        "rules": rules,
        "deals": deals,
        "seed": seed,
        "references": [reference, *compare_to],
    }
    with results_folder(out_dir, "evaluate", settings, overwrite, argv) as folder:
        tables, title = _measure(
            policies, opponents, num_players, rules, deals, seed, settings["references"], chunk, quiet
        )
        save_results(tables, folder, title)
        if not quiet:
            print(f"results written to {folder.path}")
    return tables[0]


def _measure(policies: dict, opponents, num_players, rules, deals, seed, references, chunk, quiet):
    """The tables of differences to each of ``references``, and their title (printed unless ``quiet``)."""
    paired = PairedDeals.draw(deals, num_players, len(opponents), seed)
    progress = progress_bar(total=deals * len(policies), unit="deal", unit_scale=True, disable=quiet, desc="evaluating")
    started = time.perf_counter()
    results = play_candidates(policies, opponents, paired, rules, seed, chunk=chunk, progress=progress.update)
    progress.close()
    tables = [summarise(results, name) for name in references]
    title = (
        f"{num_players} players, rules {rules}, opponents {'+'.join(opponents)}, {deals:,} paired deals, "
        f"seed {seed} ({time.perf_counter() - started:.0f} s)"
    )
    if not quiet:
        print(title)
        print("\n\n".join(format_table(table) for table in tables))
    return tables, title


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__)
    job.add_argument(
        "--candidates",
        nargs="+",
        default=["random", "most_copies", "fewest_copies", "control", "pimc", "ppo"],
        help="agent names; 'ppo' is the shipped model, 'ppo:path.zip' another one; 'pimc:512' sets the samples",
    )
    add_flag(job, "opponents")
    add_table_flags(job)
    add_flag(job, "deals")
    job.add_argument("--reference", default="random", help="the candidate every difference is taken to")
    job.add_argument("--compare-to", nargs="*", default=[], help="more references, each with its own table")
    add_flag(job, "out", help="folder for results.md/.csv/.json/.png (default: results/evaluate/<settings hash>)")
    add_flag(job, "overwrite")
    job.add_argument("--trust-model", action="store_true", help=TRUST_HELP)
    return job


def main(argv=None) -> list[Row]:
    job = parser()
    args = job.parse_args(argv)
    try:
        return evaluate(
            args.candidates,
            args.opponents,
            args.players,
            args.rules,
            args.deals,
            args.seed,
            args.reference,
            tuple(args.compare_to),
            out_dir=args.out or "",
            overwrite=args.overwrite,
            argv=sys.argv[1:] if argv is None else list(argv),
            trust_model=args.trust_model,
        )
    except (ValueError, FileNotFoundError, ImportError, Refused) as error:  # names, sizes, files, folders
        job.error(str(error))


if __name__ == "__main__":
    main()

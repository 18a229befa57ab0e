"""The report of ``python -m train.seeds``: per recipe and table size, each seed's gain over most_copies, the mean,
range and IQM with its 95% interval (:mod:`train.measure.over_seeds`); the references and the exact optimum on the
same deals; the probability of improvement between recipes; results.json, .md, .csv, seeds.png and, with several
budgets, budgets.png (gain against PPO steps and against training time)."""

from __future__ import annotations

import itertools
import json

import numpy as np

from ..runner.cli import counted
from ..runner.results_folder import csv_of, pyplot
from .over_seeds import probability_of_improvement, summary

#: a share of the optimum's gain is given only where that gain is this many times the seeds' deal CIs: below, the
#: share divides the deals' noise by almost nothing (4 players, 5 ranks: the optimum gains 0.001 a deal, the CIs 0.02)
SHARE_OVER_NOISE = 2.0
EXACT_FLOOR = 1e-12  # exact values (CIs 0): an optimum that gains less than this over most_copies gains nothing


def save_report(settings: dict, units: dict, folder, bootstrap_seed: int) -> dict:
    """Write the report of finished ``units`` (name → result) into ``folder``; return its document. Wall times
    (each run's training seconds, its own record) reach only budgets.png and the provenance: the tables are the
    same bytes wherever and however fast the runs were trained."""
    document = report(settings, units, bootstrap_seed)
    out = folder.path
    folder.write(out / "results.json", lambda p: p.write_text(json.dumps(document, indent=1) + "\n"))
    folder.write(out / "results.csv", csv_of(seed_rows(settings, units)))
    markdown = format_markdown(settings, document)
    folder.write(out / "results.md", lambda p: p.write_text(markdown))
    print(markdown)
    plot_seeds(settings, document, folder)
    if len({arm["budget"] for arm in settings["arms"].values()}) > 1:
        plot_budgets(settings, document, training_minutes(settings, units), folder)
    print(f"results written to {out}")
    return document


def seed_rows(settings: dict, units: dict) -> list[dict]:
    """One row per recipe, seed and size: the seed's gain with its CI over the deals, and its run."""
    rows = []
    for arm in settings["arms"]:
        for seed in settings["seeds"]:
            unit = units[f"{arm}_s{seed}"]
            for n, gain in unit["gains"].items():
                rows.append({"recipe": arm, "seed": seed, "players": int(n), "gain_over_most_copies": gain["gain"],
                             "gain_ci95": gain["gain_ci95"], "chips_per_deal": gain["chips"], "run": unit["run"],
                             "model_sha256": unit["model_sha256"]})  # fmt: skip
    return rows


def report(settings: dict, units: dict, bootstrap_seed: int) -> dict:
    """The numbers: per size, each recipe's summary over seeds, the references, the optimum, and every pair's
    probability of improvement."""
    sizes = [str(n) for n in settings["evaluation"]["players"]]
    arms = list(settings["arms"])
    scores = {arm: {n: np.array([units[f"{arm}_s{s}"]["gains"][n]["gain"] for s in settings["seeds"]]) for n in sizes}
              for arm in arms}  # fmt: skip
    by_size = {}
    for n in sizes:
        entry = {"recipes": {}}
        for arm in arms:
            entry["recipes"][arm] = summary(scores[arm][n], bootstrap_seed) | {
                "deal_ci95": [units[f"{arm}_s{s}"]["gains"][n]["gain_ci95"] for s in settings["seeds"]],
                "ppo_timesteps": units[f"{arm}_s{settings['seeds'][0]}"]["ppo_timesteps"],
            }
        if f"references_{n}p" in units:
            gains = units[f"references_{n}p"]["gains"]
            entry["references"] = {name: gains[name] for name in settings["references"]}
        if f"optimum_{n}p" in units:
            entry["optimum"] = optimum = units[f"optimum_{n}p"]
            best = optimum["optimum"] - optimum["most_copies"]
            for arm in arms:  # the learned gain beside the best gain any lead policy makes there
                recipe = entry["recipes"][arm]
                recipe["below_optimum"] = best - recipe["iqm"]["value"]  # chips per deal, IQM
                if best > max(SHARE_OVER_NOISE * max(recipe["deal_ci95"]), EXACT_FLOOR):  # else most_copies is
                    # (all but) optimal: a share would divide the deals' noise, or an exact 0, by almost nothing
                    recipe["share_of_optimum"] = {
                        "iqm": recipe["iqm"]["value"] / best,
                        "seeds": [g / best for g in recipe["seeds"]],
                    }
        entry["improvement"] = [
            {"x": x, "y": y, **probability_of_improvement(scores[x][n], scores[y][n], bootstrap_seed).record()}
            for x, y in itertools.permutations(arms, 2)
            if arms.index(x) < arms.index(y)
        ]
        by_size[n] = entry
    return {"settings": settings, "by_size": by_size}


def _interval(record: dict, digits: int = 2) -> str:
    return f"{record['value']:+.{digits}f} [{record['low']:+.{digits}f}, {record['high']:+.{digits}f}]"


def measured(evaluation: dict) -> str:
    """How the models were measured, as the report's first line says it."""
    if evaluation.get("exact"):
        return "valued exactly over every deal of the deck (train.measure.exact_tree)"
    return f"on the same {evaluation['deals']:,} held-out paired deals (seed {evaluation['seed']})"


def format_markdown(settings: dict, document: dict) -> str:
    """A table per size: recipes (seeds, mean, range, IQM and interval), references, the optimum; then the
    probabilities of improvement."""
    evaluation = settings["evaluation"]
    lines = [
        f"Gain over most_copies in chips per deal: {counted(len(settings['seeds']), 'training seed')} "
        f"({' '.join(map(str, settings['seeds']))}) per recipe, each model {measured(evaluation)}, rules "
        f"{evaluation['rules']}, opponents {'+'.join(evaluation['opponents'])}. IQM with its stratified-bootstrap 95% "
        "interval (rliable).",
        "",
    ]
    for n, entry in document["by_size"].items():
        optimum = entry.get("optimum")
        d = 3 if optimum else 2  # a small deck's gains are tenths of a chip: one more digit
        unshared = "— (most_copies is optimal)" if evaluation.get("exact") else "(within the deals' noise)"
        share = " share of the optimum's gain (IQM) | below the optimum (IQM) |" if optimum else ""
        lines += [f"**{n} players**", "", f"| recipe | each seed | mean | range | IQM [95% CI] |{share}",
                  "|---|---|---|---|---|" + "---|---|" * bool(optimum)]  # fmt: skip
        for arm, r in entry["recipes"].items():
            seeds = " ".join(f"{g:+.{d}f}" for g in r["seeds"])
            shared = f"{r['share_of_optimum']['iqm']:.0%}" if "share_of_optimum" in r else unshared
            part = f" {shared} | {r['below_optimum']:.3f} |" if optimum else ""
            lines.append(f"| {arm} | {seeds} | {r['mean']:+.{d}f} | {r['min']:+.{d}f} to {r['max']:+.{d}f} | "
                         f"{_interval(r['iqm'], d)} |{part}")  # fmt: skip
        for name, g in entry.get("references", {}).items():
            row = f"| {name} (reference) | {g['gain']:+.{d}f} ± {g['gain_ci95']:.{d}f} | | | |"
            lines.append(row + " | |" * bool(optimum))
        if optimum:
            best = optimum["optimum"] - optimum["most_copies"]
            lines.append(f"| the optimum (exact) | {best:+.4f} | | | | | 0 |")
            lines.append(f"| random lead (exact) | {optimum['random'] - optimum['most_copies']:+.3f} | | | | | |")
        if entry["improvement"]:
            pairs = ", ".join(f"P({p['x']} > {p['y']}) = {p['value']:.2f} [{p['low']:.2f}, {p['high']:.2f}]"
                              for p in entry["improvement"])  # fmt: skip
            lines += ["", f"Probability of improvement: {pairs}."]
        lines.append("")
    return "\n".join(lines)


def plot_seeds(settings: dict, document: dict, folder) -> None:
    """seeds.png: a panel per size; each recipe's seeds as dots (with their deals' 95% CIs), its IQM as a bar with
    its interval; the references and the optimum as lines."""
    plt = pyplot()
    if plt is None:
        return
    sizes = list(document["by_size"])
    arms = list(settings["arms"])
    fig, axes = plt.subplots(1, len(sizes), figsize=(1.6 + 1.1 * len(arms) * len(sizes) + 1.5, 4.2), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        entry = document["by_size"][n]
        for i, arm in enumerate(arms):
            r = entry["recipes"][arm]
            iqm = r["iqm"]
            box = plt.Rectangle((i - 0.3, iqm["low"]), 0.6, iqm["high"] - iqm["low"], color="tab:blue", alpha=0.2)
            ax.add_patch(box)
            ax.hlines(iqm["value"], i - 0.3, i + 0.3, color="tab:blue", linewidth=2)
            offsets = np.linspace(-0.15, 0.15, len(r["seeds"])) if len(r["seeds"]) > 1 else [0.0]
            ax.errorbar(i + np.asarray(offsets), r["seeds"], yerr=r["deal_ci95"], fmt="o", color="black",
                        markersize=4, elinewidth=0.8, capsize=2)  # fmt: skip
        lines = {f"{name}": g["gain"] for name, g in entry.get("references", {}).items()}
        if "optimum" in entry:
            lines["optimum (exact)"] = entry["optimum"]["optimum"] - entry["optimum"]["most_copies"]
        low, high = _scale(entry, lines.get("optimum (exact)"))
        off = []  # a reference far from the recipes (random lead, 1.4 chips below) would flatten them to a line
        for (name, value), style in zip(lines.items(), itertools.cycle(["--", ":", "-."])):
            if not low <= value <= high:
                off.append(f"{name} {value:+.2f}")
                continue
            ax.axhline(value, linestyle=style, color="tab:gray", linewidth=1)
            ax.annotate(name, (len(arms) - 0.5, value), fontsize=7, color="dimgray", ha="right", va="bottom")
        ax.set_ylim(low, high)
        if off:
            ax.set_xlabel("off the scale: " + ", ".join(off), fontsize=7)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(arms)), arms, fontsize=8, rotation=20 if len(arms) > 3 else 0)
        ax.set_xlim(-0.6, len(arms) - 0.4)
        ax.set_title(f"{n} players", fontsize=9)
    axes[0][0].set_ylabel("gain over most_copies, chips per deal\n(seeds: dots; IQM and its 95% CI: bar)")
    evaluation = settings["evaluation"]
    shown = "exact values" if evaluation.get("exact") else f"{evaluation['deals']:,} paired deals"
    fig.suptitle(f"{counted(len(settings['seeds']), 'seed')} a recipe, {shown}, opponents "
                 f"{'+'.join(evaluation['opponents'])}, {evaluation['rules']}", fontsize=9)  # fmt: skip
    fig.tight_layout()
    folder.write(folder.path / "seeds.png", lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)


def training_minutes(settings: dict, units: dict) -> dict[str, float]:
    """Each recipe's mean training time over its seeds, in minutes (the runs' own records; NaN if none)."""
    minutes = {}
    for arm in settings["arms"]:
        seconds = [units[f"{arm}_s{s}"]["training_seconds"] for s in settings["seeds"]]
        known = [s for s in seconds if s is not None]
        minutes[arm] = float(np.mean(known)) / 60 if known else float("nan")
    return minutes


def _scale(entry: dict, optimum: float | None, zero: bool = True) -> tuple[float, float]:
    """A panel's y-limits: the recipes' seeds with their deals' CIs, their intervals, the optimum and (``zero``)
    most_copies' level, padded."""
    values = [0.0] * zero + ([optimum] if optimum is not None else [])
    for r in entry["recipes"].values():
        values += [g + c for g, c in zip(r["seeds"], r["deal_ci95"])] + [
            g - c for g, c in zip(r["seeds"], r["deal_ci95"])
        ]
        values += [r["iqm"]["low"], r["iqm"]["high"]]
    pad = max(0.25 * (max(values) - min(values)), 0.02)
    return min(values) - pad, max(values) + pad


def plot_budgets(settings: dict, document: dict, minutes: dict, folder) -> None:
    """budgets.png: per size, each recipe's IQM (and interval) against its PPO steps, and against its seeds' mean
    training time (the runs' own records)."""
    plt = pyplot()
    if plt is None:
        return
    sizes = list(document["by_size"])
    recipes = dict.fromkeys(name.rsplit("_x", 1)[0] for name in settings["arms"])
    fig, axes = plt.subplots(2, len(sizes), figsize=(3.6 * len(sizes) + 0.8, 6.4), squeeze=False)
    for column, n in enumerate(sizes):
        entry = document["by_size"][n]
        for recipe in recipes:
            arms = [a for a in settings["arms"] if a.rsplit("_x", 1)[0] == recipe]
            rows = [entry["recipes"][a] for a in arms]
            iqm = np.array([[r["iqm"]["value"], r["iqm"]["low"], r["iqm"]["high"]] for r in rows])
            steps = [r["ppo_timesteps"] for r in rows]
            for ax, x in ((axes[0][column], steps), (axes[1][column], [minutes[a] for a in arms])):
                ax.errorbar(x, iqm[:, 0], yerr=[iqm[:, 0] - iqm[:, 1], iqm[:, 2] - iqm[:, 0]], marker="o", capsize=3,
                            label=recipe)  # fmt: skip
        low, high = _scale(entry, None, zero=False)
        off = []
        for name, g in entry.get("references", {}).items():
            if not low <= g["gain"] <= high:  # random lead, chips below: it would flatten the curves to a line
                off.append(f"{name} {g['gain']:+.2f}")
                continue
            for ax in axes[:, column]:
                ax.axhline(g["gain"], linestyle="--", color="tab:gray", linewidth=1)
                ax.annotate(name, (0.02, g["gain"]), xycoords=("axes fraction", "data"), fontsize=7, color="dimgray")
        steps = sorted({entry["recipes"][a]["ppo_timesteps"] for a in settings["arms"]})
        for ax, label in ((axes[0][column], "PPO steps"), (axes[1][column], "training minutes (mean over seeds)")):
            ax.set_ylim(low, high)
            ax.set_xscale("log")
            ax.minorticks_off()  # log minor ticks labelled 3x10^5, 4x10^5... overprinted one another
            ax.set_xlabel(label + (f"\noff the scale: {', '.join(off)}" if off else ""), fontsize=8)
        axes[0][column].set_xticks(steps, [f"{s / 1e6:.2g}M" for s in steps])
        spent = sorted(minutes[a] for a in settings["arms"] if np.isfinite(minutes[a]))
        axes[1][column].set_xticks(spent, [f"{m:.2g}" for m in spent])
        axes[0][column].set_title(f"{n} players", fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel("gain over most_copies (IQM, 95% CI)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"gain against budget, {counted(len(settings['seeds']), 'seed')} a point", fontsize=9)
    fig.tight_layout()
    folder.write(folder.path / "budgets.png", lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)

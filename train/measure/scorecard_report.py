"""The score card's report (train.scorecard): its markdown, with the exploitability heading in words, and its
chart of gains per table size."""

from __future__ import annotations

from ..runner.results_folder import pyplot


def tables_of(card: dict) -> tuple[list[str], list[int]]:
    """The card's kinds of opponents' table (in the order it played them) and its table sizes."""
    return list(dict.fromkeys(row["opponents"] for row in card["cells"])), sorted({r["players"] for r in card["cells"]})


def format_markdown(card: dict) -> str:
    """The card as results.md holds it."""
    agent = card["agent"]
    kinds, sizes = tables_of(card)
    reduced = card["variance_reduction"]
    other_rules = card.get("trained_on_rules")
    lines = [f"# Score card: {agent}", ""]
    if other_rules:
        lines += [f"**Warning: {agent} was trained on the {other_rules} rules; this suite plays {card['rules']}.**", ""]
    lines += [
        f"Rules {card['rules']}; suite {card['suite_version']}, scale {card['scale_version']}, seed {card['seed']}, "
        f"{card['deals_per_cell']:,} paired deals per cell"
        + (f", variance reduction ({reduced} rollouts per lead)" if reduced else "")
        + ".",
        "",
    ]
    if card["overall_score"] is None:
        lines.append("**No overall score**: no cell's anchors are apart (pimc:128's gain clear of 0)")
    else:
        low, high = card["overall_score_ci95"]
        reference = card["reference_scores"]
        lines.append(
            f"**Overall score: {card['overall_score']:.0f}** (95% CI {low:.0f} to {high:.0f}): its gain over "
            f"most_copies summed over the {len(card['scored_cells'])} scored cells, as a percentage of pimc:128's "
            f"there. For scale: most_copies 0, a random lead {reference['random']:.0f}, pimc:128 100."
        )
    if card["unscored_cells"]:
        lines += ["", "Not scored (pimc:128's gain within its CI of most_copies' 0): "
                  + ", ".join(card["unscored_cells"]) + "."]  # fmt: skip
    lines += [
        "",
        "Gain over most_copies in its seat, chips per deal (95% CI), and the cell's score:",
        "",
        "(*vs own copies* is never scored: that table is the agent itself, so no anchor's play can be measured at "
        "it — pimc:128 at a table of this agent's copies is a question about this agent, not a fixed scale.)",
        "",
        "| players | " + " | ".join(f"vs {kind}" for kind in kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    for players in sizes:
        cells = []
        for kind in kinds:
            (row,) = [r for r in card["cells"] if (r["opponents"], r["players"]) == (kind, players)]
            text = f"{row['gain']:+.2f} ± {row['gain_ci95']:.2f}"
            cells.append(text + (f" ({row['score']:.0f})" if "score" in row else ""))
        lines.append(f"| {players} | " + " | ".join(cells) + " |")
    lines += [
        "",
        exploit_heading(card),
        "",
        "| players | best response's gain over it (95% CI) | the same, by its advantages along the response's play |",
        "|---|---|---|",
    ]
    for e in card["exploitability"]:
        advantages = f"{e['by_advantages']:+.2f} ± {e['by_advantages_ci95']:.2f}" if "by_advantages" in e else "—"
        lines.append(f"| {e['players']} | {e['gain']:+.2f} ± {e['gain_ci95']:.2f} | {advantages} |")
    lines += ["", "Place in a small league (ratings of train.measure.ratings):", ""]
    lines.append("| players | place | rating (95% CI) |")
    lines.append("|---|---|---|")
    for players, place in card["league"].items():
        (mine,) = [row for row in place["board"] if row["agent"] == agent]
        low, high = mine["rating_ci95"]
        lines.append(
            f"| {players} | {place['place']} of {place['of']} | {mine['rating']:+.2f} ({low:+.2f} to {high:+.2f}) |"
        )
    return "\n".join(lines) + "\n"


def exploit_heading(card: dict) -> str:
    """The exploitability rows' heading: their best response, in words, with its budget."""
    learned, deals = card.get("exploit_learned"), f"{card['exploit_deals']:,} deals"
    if learned is None:
        return (f"Exploitability (a {card['exploit_samples']}-world search best response at a table of its copies, "
                f"{deals}; a lower bound):")  # fmt: skip
    start = "its own weights" if learned["start"] == "target" else learned["start"]
    return (f"Exploitability at a table of its copies (a learned best response: PPO from {start}, "
            f"{learned['steps']:,} steps a table size, a cheaper setting than python -m train.exploit "
            f"--best-response learned; {deals}; a lower bound):")  # fmt: skip


def plot(card: dict, folder) -> None:
    """scorecard.png: the gain over most_copies against the table size, a line per kind of table."""
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for kind in tables_of(card)[0]:
        rows = [r for r in card["cells"] if r["opponents"] == kind]
        ax.errorbar([r["players"] for r in rows], [r["gain"] for r in rows], [r["gain_ci95"] for r in rows],
                    marker="o", capsize=3, label=f"vs {kind}")  # fmt: skip
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("players")
    ax.set_ylabel("gain over most_copies, chips per deal (95% CI)")
    overall = card["overall_score"]
    text = "—" if overall is None else "{:.0f} (95% CI {:.0f} to {:.0f})".format(overall, *card["overall_score_ci95"])
    ax.set_title(f"{card['agent']} ({card['rules']} rules): overall score {text}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    folder.write(folder.path / "scorecard.png", lambda p: fig.savefig(p, dpi=120, format="png"))
    plt.close(fig)

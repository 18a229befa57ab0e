"""The exact value of any agent on a small deck, no training needed: its chips per deal in one seat at a table of one
scripted policy, the optimum's (the best lead policy there), its gain over most_copies, its regret (optimum − value)
and its share of the optimum's gain, all computed over every deal of the deck (train.measure.exact_tree).

    python -m train.exact --candidates most_copies random ppo --rules scarne:ranks=4 --players 3
    python -m train.exact --candidates my_agent.py:agent ppo:runs/mine/final_model.zip --rules scarne:ranks=5 \\
        --players 4 --opponents most_copies --out results/exact_mine

The walk of the deck's tree is compiled; each candidate is asked in batches at every information state of its seat
where it has a real choice: for its lead_probabilities (the scripted agents), its greedy network's choice (ties
uniform), or, for an agent that gives neither, its action, which must be the same on a second call with another
seed (a deterministic agent; a search, which draws its own, has no exact value and is refused). Values are averaged
over the dealer, as the optimum is. Decks the walk takes: up to 6 ranks at 3 players, 5 at 4 (--rules
<preset>:ranks=<k>).
"""

from __future__ import annotations

import argparse
import json

from .measure.candidates import made, model_files
from .measure.exact import count_worlds
from .measure.exact_tree import check_has_exact_value, exact_agent_values
from .measure.exact_walk import check_exact
from .runner.cli import add_flag, add_job_flags, new_parser, progress_bar, refuse_repeats
from .runner.job import Job, Plan, Refusal

REFERENCE = "most_copies"
GAIN_FLOOR = 1e-12  # the optimum's gain over most_copies below this is none: no share is given


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    job.add_argument("--candidates", nargs="+", default=["most_copies", "random", "ppo"],
                     help="agents, as train.evaluate names them: names, ppo:<model.zip>, package.module:attr, "
                     "path/to/file.py:attr")  # fmt: skip
    add_flag(job, "opponents", help="the table: one policy the kernel plays, in every other seat")
    add_flag(job, "players", default=3)
    add_flag(job, "rules", default="scarne:ranks=4", help="a small deck, <preset>:ranks=<k> (k up to 6 at 3 players)")
    job.add_argument("--seat", type=int, default=0, help="the candidates' seat (values average over the dealer)")
    add_job_flags(job, "results.json/.md")
    return job


def check(args) -> Plan:
    """A deck the walk takes, a table the kernel plays, every candidate made and able to play it; keyed by their
    files."""
    refuse_repeats("candidates", args.candidates)
    check_exact(args.opponents, args.players, args.rules)
    table = args.opponents[0]
    if not 0 <= args.seat < args.players:
        raise Refusal(f"--seat got {args.seat}; allowed: a seat from 0 to {args.players - 1}")
    policies = made([REFERENCE, *args.candidates], args.trust_model, [(args.rules, args.players)])
    for spec in args.candidates:  # a search has no distribution: refused now, not after the walk
        check_has_exact_value(policies[spec], spec, args.players, args.rules)
    settings = {key: getattr(args, key) for key in ("candidates", "opponents", "players", "rules", "seat")}
    settings["models"] = model_files(policies)

    def work(folder) -> dict:
        deals = count_worlds(args.players, args.rules)
        with progress_bar(total=deals, desc="walking", unit="deal", disable=not args.progress) as bar:
            values, how = exact_agent_values(policies, table, args.players, args.rules, args.seat, bar.update)
        document = results(values, how, args.candidates)
        title = (f"exact chips per deal in seat {args.seat}, {args.players} players, rules {args.rules}, a table of "
                 f"{table}, every one of the deck's {deals:,} holdings")  # fmt: skip
        markdown = f"{title}\n\n{format_table(document)}\n"
        folder.write(folder.path / "results.json", lambda p: p.write_text(json.dumps({"title": title, **document},
                                                                                     indent=2)))  # fmt: skip
        folder.write(folder.path / "results.md", lambda p: p.write_text(markdown))
        print(markdown)
        print(f"results written to {folder.path}")
        return document

    return Plan(work, settings, args.out, args.overwrite)


def results(values: dict, how: dict, candidates) -> dict:
    """results.json's document: the optimum, and per candidate its value, gain over most_copies, regret, share of
    the optimum's gain (absent where that gain is 0) and how its probabilities were had."""
    optimum, reference = values["optimum"], values[REFERENCE]
    best_gain = optimum - reference
    rows = []
    for name in candidates:
        row = {"name": name, "value": values[name], "gain_over_most_copies": values[name] - reference,
               "regret": optimum - values[name]}  # fmt: skip
        if abs(best_gain) > GAIN_FLOOR:
            row["share_of_optimum"] = row["gain_over_most_copies"] / best_gain
        row["probabilities"] = how[name]
        rows.append(row)
    return {"optimum": {"value": optimum, "gain_over_most_copies": best_gain}, "candidates": rows}


def format_table(document: dict) -> str:
    """The candidates and the optimum as a Markdown table."""
    lines = ["| agent | chips per deal | gain over most_copies | regret | share of the optimum's gain |",
             "|---|---|---|---|---|"]  # fmt: skip
    optimum = document["optimum"]
    lines.append(f"| optimum | {optimum['value']:+.6f} | {optimum['gain_over_most_copies']:+.6f} | 0 | 100% |")
    for row in document["candidates"]:
        share = f"{100 * row['share_of_optimum']:.1f}%" if "share_of_optimum" in row else "— (no gain to share)"
        lines.append(f"| {row['name']} | {row['value']:+.6f} | {row['gain_over_most_copies']:+.6f} | "
                     f"{row['regret']:.6f} | {share} |")  # fmt: skip
    return "\n".join(lines)


JOB = Job(
    parser,
    check,
    example=("--candidates", "most_copies", "random", "--rules", "scarne:ranks=3", "--players", "3"),
    agents=("candidates", "opponents"),
)
main = JOB.main


if __name__ == "__main__":
    main()

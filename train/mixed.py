"""Mixed tables: several agents at one table, every deal replayed with the seats rotated so each agent sits
in every seat of the same deal, in an order round the table drawn afresh for each deal (:func:`arrangements`);
chips per deal per agent with 95% CIs. A table of one agent in every seat is
a self-play table (each agent there earns 0 on average; the check is that it does).

    python -m train.mixed --agents ppo pimc most_copies random --players 4 --deals 20000
    python -m train.mixed --agents ppo ppo ppo ppo ppo ppo --players 6 --deals 5000
"""

from __future__ import annotations

import json

from .measure.candidates import made, model_files
from .measure.rotations import play_mixed
from .runner.cli import add_flag, add_job_flags, add_table_flags, new_parser
from .runner.job import Job, Plan, Refusal


def parser():
    job = new_parser(__doc__, __name__)
    job.add_argument("--agents", nargs="+", required=True, help="agents seated together (as train.evaluate names them)")
    add_table_flags(job)
    add_flag(job, "deals", default=10_000, help="deals, each played once per rotation of the seats")
    add_job_flags(job, "mixed.json")
    return job


def check(args) -> Plan:
    """Every agent made (names, model files), no more agents than seats; keyed by their model files."""
    if len(args.agents) > args.players:
        raise Refusal(f"--agents names {len(args.agents)} agents for a table of {args.players} (--players)")
    settings = {key: getattr(args, key) for key in ("agents", "players", "rules", "deals", "seed")}
    settings["models"] = model_files(made(args.agents, args.trust_model, [(args.rules, args.players)]))

    def work(folder) -> dict:
        table = play_mixed(
            args.agents, args.players, args.rules, args.deals, args.seed, args.trust_model, args.progress
        )
        title = f"{args.players} players, rules {args.rules}, {args.deals:,} deals × {args.players} seat rotations"
        document = json.dumps({"title": title, "agents": table}, indent=2)
        folder.write(folder.path / "mixed.json", lambda p: p.write_text(document))
        print(title)
        print("| agent | seats | chips per deal (95% CI) |\n|---|---|---|")
        for name, row in table.items():
            print(f"| {name} | {row['seats']} | {row['chips_per_deal']:+.2f} ± {row['ci95']:.2f} |")
        print(f"results written to {folder.path}")
        return table

    return Plan(work, settings, args.out, args.overwrite)


JOB = Job(
    parser,
    check,
    example=("--agents", "random", "most_copies", "--players", "3", "--deals", "20"),
    agents=("agents",),
)
main = JOB.main


if __name__ == "__main__":
    main()

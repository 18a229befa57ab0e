"""A leaderboard of learning algorithms by **exact** regret on small decks: each entry an algorithm's final agents, one
per training seed, named as every job names agents (``ppo:<model.zip>``, ``my_agent.py:agent``, a name); each agent's
exact regret (the optimum's chips a deal − its own, train.measure.exact_tree) on every deck; per entry and deck each
seed's regret, their mean and their IQM with its stratified-bootstrap 95% interval (rliable), and where the entry
came from (its settings, its training time). One walk a deck values every agent of every entry.

    python -m train.leaderboard --from-seeds docs/results/seeds_small_deck_r4 --decks 4x3 4x4
    python -m train.leaderboard --entry "mine=mine_s0.py:agent mine_s1.py:agent mine_s2.py:agent" \\
        --entry "baseline=most_copies" --decks 4x3 5x3 4x4 --out results/leaderboard_mine

``--entry NAME=AGENTS`` names an algorithm and its agents (space-separated, one per seed; a scripted agent is one
"seed"); ``--entries FILE`` takes entries from a JSON file (each its agents by deck, its settings, its runs'
seconds: examples/leaderboard_recipes.py trains the library recipes of examples/ and writes one); ``--from-seeds
FOLDER`` takes each recipe of a ``train.seeds`` folder with its kept models (``FOLDER/models/<recipe>_s<seed>.zip``),
its flags as settings and its runs' training time. A deck ``KxN`` is K
ranks at N players (3 players up to 6 ranks, 4 up to 5), every agent in one seat at a table of ``--opponents``.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from snipsnap_env.rules import make_rules

from .measure.candidates import made, model_files
from .measure.exact_tree import check_has_exact_value, exact_agent_values
from .measure.exact_walk import check_exact, deck
from .measure.over_seeds import summary
from .runner.cli import add_flag, add_job_flags, new_parser, refuse_repeats, seed_value
from .runner.job import Job, Plan, Refusal
from .runner.units import InProcess, add_ray_flags, require_ray, start_runner

DECKS = ("4x3", "5x3", "4x4")
ANY = "*"  # an entry's agents given for every deck (--entry), beside those trained for one (--from-seeds)


def entry(text: str) -> tuple[str, tuple[str, ...]]:
    """``NAME=AGENT AGENT ...`` as (name, agents), or a ValueError naming the form."""
    name, equals, agents = text.partition("=")
    if not equals or not name.strip() or not agents.split():
        raise ValueError(f"an entry is NAME=AGENT [AGENT ...] (one agent per training seed); got {text!r}")
    return name.strip(), tuple(agents.split())


def from_seeds(folder: Path) -> dict:
    """Each recipe of a train.seeds results folder as an entry: its kept models (on the decks the folder's rules and
    table sizes make: the models were trained on that deck), its flags, its training seconds."""
    args = folder / "args.json"
    if not args.is_file():
        raise ValueError(f"--from-seeds {folder}: no args.json there (not a train.seeds results folder)")
    settings = json.loads(args.read_text())
    provenance = folder / "provenance.json"  # wall time lives there, not in the units
    timings = json.loads(provenance.read_text()).get("timings", {}) if provenance.is_file() else {}
    seconds = timings.get("training_seconds", {})
    entries = {}
    for arm, recipe in settings.get("arms", {}).items():
        stems = [f"{arm}_s{seed}" for seed in settings["seeds"]]
        models = [folder / "models" / f"{stem}.zip" for stem in stems]
        missing = [str(m) for m in models if not m.is_file()]
        if missing:
            raise ValueError(f"--from-seeds {folder}: the models of {arm} are not kept there ({', '.join(missing)})")
        flags = shlex.join(recipe["flags"])
        times = [seconds.get(stem) for stem in stems]
        ranks = make_rules(settings["evaluation"]["rules"]).ranks
        decks = {f"{ranks}x{n}": [f"ppo:{m}" for m in models] for n in settings["evaluation"]["players"]}
        entries[arm] = {"agents": decks, "settings": f"train_ppo {flags}" if flags else "train_ppo, its defaults",
                        "training_seconds": times if all(t is not None for t in times) else None}  # fmt: skip
    return entries


def from_file(path: Path) -> dict:
    """The entries a JSON file names — ``{NAME: {"agents": {DECK: [AGENT, ...]}, "settings": TEXT,
    "training_seconds": [S, ...]}}``, as examples/leaderboard_recipes.py writes it — or a ValueError naming what is
    wrong where."""
    try:
        found = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"--entries {path}: cannot read it as JSON ({error})") from None
    if not isinstance(found, dict) or not found:
        raise ValueError(f"--entries {path}: not an object of entries by name")
    entries = {}
    for name, e in found.items():
        agents_ok = isinstance(e, dict) and isinstance(e.get("agents"), dict) and all(
            isinstance(group, list) and group and all(isinstance(a, str) for a in group)
            for group in e["agents"].values()
        )
        if not agents_ok:
            raise ValueError(f"--entries {path}: entry {name!r} needs \"agents\": {{DECK: [AGENT, ...]}}")
        for text in set(e["agents"]) - {ANY}:
            try:
                deck(text)
            except ValueError as error:
                raise ValueError(f"--entries {path}: entry {name!r}: {error}") from None
        seconds = e.get("training_seconds")
        if seconds is not None and not (isinstance(seconds, list) and all(isinstance(t, int | float) for t in seconds)):
            raise ValueError(f"--entries {path}: entry {name!r}: \"training_seconds\" is a list of seconds")
        entries[name] = {"agents": e["agents"], "settings": str(e.get("settings", "as given")),
                         "training_seconds": seconds}  # fmt: skip
    return entries


def parser() -> argparse.ArgumentParser:
    job = new_parser(__doc__, __name__)
    job.add_argument("--entry", nargs="+", type=entry, default=[], metavar="NAME=AGENTS", action="extend",
                     help="an algorithm and its agents, one per training seed")  # fmt: skip
    job.add_argument("--from-seeds", nargs="+", default=[], metavar="FOLDER",
                     help="train.seeds results folders: each recipe with its kept models")  # fmt: skip
    job.add_argument("--entries", nargs="+", type=Path, default=[], metavar="FILE",
                     help="JSON files of entries (agents by deck, settings, training seconds), as "
                          "examples/leaderboard_recipes.py writes them")  # fmt: skip
    job.add_argument("--decks", nargs="+", default=list(DECKS), help="small decks as <ranks>x<players>")
    add_flag(job, "opponents", help="the table: one policy the kernel plays, in every other seat")
    add_flag(job, "rules", help="the rules the decks are cut from (each deck adds its ranks=K)")
    job.add_argument("--bootstrap-seed", type=seed_value, default=0, help="seed of the bootstrap's resamples")
    add_ray_flags(job)
    add_job_flags(job, "leaderboard.md/.json")
    return job


def check(args) -> Plan:
    """Entries named once, every deck one the walk takes, every agent made and with an exact value there."""
    entries = {}
    for folder in args.from_seeds:  # a recipe in several folders (one a deck) is one entry over their decks
        try:
            found = from_seeds(Path(folder))
        except ValueError as error:
            raise Refusal(str(error)) from None
        for name, e in found.items():
            if name in entries and entries[name]["settings"] == e["settings"]:
                entries[name]["agents"] |= e["agents"]
                times = [entries[name]["training_seconds"], e["training_seconds"]]
                entries[name]["training_seconds"] = None if None in times else times[0] + times[1]
            else:
                entries[f"{name} ({Path(folder).name})" if name in entries else name] = e
    for path in args.entries:
        try:
            found = from_file(path)
        except ValueError as error:
            raise Refusal(str(error)) from None
        for name, e in found.items():
            if name in entries:
                raise Refusal(f"--entries {path}: entry {name!r} is named twice")
            entries[name] = e
    for name, specs in args.entry:
        if name in entries:
            raise Refusal(f"--entry {name!r} is named twice")
        entries[name] = {"agents": {ANY: list(specs)}, "settings": "as given", "training_seconds": None}
    if not entries:
        raise Refusal("no entries: give --entry NAME=AGENTS, --entries FILE or --from-seeds FOLDER")
    refuse_repeats("decks", args.decks)
    decks = []
    for text in args.decks:
        try:
            ranks, players = deck(text)
        except ValueError as error:
            raise Refusal(f"--decks: {error}") from None
        if "ranks=" in args.rules:
            raise Refusal(f"--rules {args.rules}: the decks set the ranks (--decks {text}); give rules without them")
        rules = f"{args.rules}{',' if ':' in args.rules else ':'}ranks={ranks}"
        check_exact(args.opponents, players, rules)
        decks.append((text, rules, players))
    if not any(agents_at(e, text) for e in entries.values() for text, _, _ in decks):
        raise Refusal(f"no entry has agents for the decks {' '.join(args.decks)}")
    specs = list(dict.fromkeys(spec for e in entries.values() for group in e["agents"].values() for spec in group))
    policies = made(specs, args.trust_model, [(rules, players) for _, rules, players in decks])
    for spec, policy in policies.items():
        check_has_exact_value(policy, spec, decks[0][2], decks[0][1])
    for name, e in entries.items():
        e["agents"] = {deck: group for deck, group in e["agents"].items() if deck == ANY or deck in args.decks}
    settings = {"entries": entries, "decks": [d[0] for d in decks], "rules": args.rules,
                "opponents": args.opponents, "bootstrap_seed": args.bootstrap_seed,
                "models": model_files(policies)}  # fmt: skip

    require_ray(args)
    runner = start_runner(args)

    def work(folder) -> dict:
        values = None if isinstance(runner, InProcess) else deck_values_on(runner, entries, decks, args)
        document = board(entries, policies, decks, args.opponents[0], args.bootstrap_seed, values)
        markdown = format_markdown(document, args.opponents[0])
        folder.write(folder.path / "leaderboard.json", lambda p: p.write_text(json.dumps(document, indent=2)))
        folder.write(folder.path / "leaderboard.md", lambda p: p.write_text(markdown))
        print(markdown)
        print(f"results written to {folder.path}")
        return document

    return Plan(work, settings, args.out, args.overwrite, close=runner.close)


def agents_at(e: dict, deck: str) -> list[str]:
    """An entry's agents on ``deck``: those trained for it, else those given for every deck."""
    return e["agents"].get(deck, e["agents"].get(ANY, []))


def deck_values(specs: dict, trust_model: bool, table: str, players: int, rules: str) -> dict:
    """A work unit: the exact value of each agent of ``specs`` (spec → the spec made where the unit runs: its
    files' absolute paths) on one deck, and the optimum's, keyed by spec."""
    policies = made(list(specs.values()), trust_model, [(rules, players)])
    values, _ = exact_agent_values({spec: policies[where] for spec, where in specs.items()}, table, players, rules)
    return values


def deck_values_on(runner, entries: dict, decks, args) -> dict:
    """Each deck's exact values, one work unit a deck on ``runner`` (processes, Ray)."""
    handles = {}
    for text, rules, players in decks:
        specs = {spec: absolute(spec) for e in entries.values() for spec in agents_at(e, text)}
        handle = runner.submit(deck_values, specs, args.trust_model, args.opponents[0], players, rules)
        handles[handle] = text
    return {handles[handle]: values for handle, values in runner.results(list(handles))}


def absolute(spec: str) -> str:
    """``spec`` with its file's path made absolute (``ppo:<file>``, ``<file>.py:attr``), for a worker whose working
    folder is not this one's; names as they are."""
    kind, colon, rest = spec.partition(":")
    if kind == "ppo" and rest:
        return f"ppo:{Path(rest).expanduser().resolve()}"
    if colon and kind.endswith(".py"):
        return f"{Path(kind).expanduser().resolve()}:{rest}"
    return spec


def board(entries: dict, policies: dict, decks, table: str, bootstrap_seed: int, values_by_deck=None) -> dict:
    """Each entry's regret at each deck it has agents for (each seed's, mean, IQM and interval), ranked by the mean
    of its IQMs (the entries on every deck first); ``values_by_deck`` (deck → exact values), where given, walked
    elsewhere (work units), else walked here."""
    rows = {name: {"settings": e["settings"], "training_seconds": e["training_seconds"], "decks": {}}
            for name, e in entries.items()}  # fmt: skip
    optima = {}
    for text, rules, players in decks:
        if values_by_deck is not None:
            values = values_by_deck[text]
        else:
            here = {spec: policies[spec] for e in entries.values() for spec in agents_at(e, text)}
            values, _ = exact_agent_values(here, table, players, rules)
        optima[text] = values["optimum"]
        for name, e in entries.items():
            if agents_at(e, text):
                regrets = [values["optimum"] - values[spec] for spec in agents_at(e, text)]
                rows[name]["decks"][text] = summary(regrets, bootstrap_seed)
    for row in rows.values():
        row["seeds"] = max(len(d["seeds"]) for d in row["decks"].values()) if row["decks"] else 0
        row["mean_iqm_regret"] = sum(d["iqm"]["value"] for d in row["decks"].values()) / max(1, len(row["decks"]))
    ranked = dict(sorted(rows.items(), key=lambda item: (-len(item[1]["decks"]), item[1]["mean_iqm_regret"])))
    return {"optimum": optima, "entries": ranked}


def format_markdown(document: dict, table: str) -> str:
    """One row per entry, ranked: its IQM regret [95% CI] at each deck, seeds, training time, settings."""
    decks = list(document["optimum"])
    head = " | ".join(f"regret at {d.replace('x', ' ranks × ')} players, IQM [95% CI]" for d in decks)
    lines = [f"Exact regret (the optimum's chips a deal − the agent's), one seat at a table of {table}; the optimum: "
             + ", ".join(f"{d} {v:+.4f}" for d, v in document["optimum"].items()) + ".", "",
             f"| rank | entry | {head} | seeds | training time | settings |",
             "|---|---|" + "---|" * len(decks) + "---|---|---|"]  # fmt: skip
    for rank, (name, row) in enumerate(document["entries"].items(), 1):
        cells = " | ".join(_interval(row["decks"][d]["iqm"]) if d in row["decks"] else "—" for d in decks)
        seconds = row["training_seconds"]
        time = f"{sum(seconds):.0f} s for all its runs" if seconds else "—"
        lines.append(f"| {rank} | {name} | {cells} | {row['seeds']} | {time} | {row['settings']} |")
    return "\n".join(lines) + "\n"


def _interval(record: dict) -> str:
    return f"{record['value']:.4f} [{record['low']:.4f}, {record['high']:.4f}]"


JOB = Job(
    parser,
    check,
    example=("--entry", "scripted=most_copies fewest_copies", "--entry", "lead_random=random", "--decks", "3x3"),
    agents=("opponents",),
)
main = JOB.main


if __name__ == "__main__":
    main()

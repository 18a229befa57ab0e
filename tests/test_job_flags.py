"""The conformance test's probes of every job's flags (tests/test_jobs.py has the rest): bad table sizes, unknown
agents and sizes over their bound are one-line refusals; every flag given a bad value is refused or runs without a
traceback; the flags a job declares (JOB.writes, JOB.agents) are its own; and agent flags are found by what the
job does, not by their names."""

from __future__ import annotations

import dataclasses
import signal

import job_watch as watch
import pytest
import test_jobs
from test_jobs import (
    LONG_ENOUGH,
    NAMES,
    actions,
    assert_a_refusal,
    assert_refused,
    flags_only,
    job_of,
    jobs,
    listing,
    remove_new,
    run,
    undeclared,
    watched,
    with_out,
)

import agents
from train.learn.args import Args
from train.runner import cli
from train.runner import job as runner

here = test_jobs.here  # the fixture: each job in an empty working folder of its own


@pytest.mark.parametrize("name", jobs())
def test_bad_players_unknown_agents_and_sizes_over_their_bound_are_one_line_refusals(name, here, capsys):
    base = flags_only(name, here.parent)
    if base is None:
        pytest.skip(f"train.{name}'s example needs inputs that take a training run to make")
    before = listing(here)
    options = {action.dest: action for action in actions(name)}
    tried = 0
    if "players" in options:
        for bad in ("9", "2", "two"):
            assert_refused(name, with_out(name, [*base, "--players", bad], here / "o"), capsys, before, here)
            tried += 1
    for dest, action in options.items():
        if dest not in job_of(name).agents:
            continue
        flag = action.option_strings[0] if action.option_strings else None
        for bad in ("no_such_agent", "pimc:100000000", "ppo:no_such_file.zip"):
            argv = [*base, flag, bad] if flag else [bad, *base[1:]]
            if flag and action.nargs in ("+", "*"):  # a list flag: the bad name among good ones
                argv = [*base, flag, "random", bad] if dest != "opponents" or name != "ismcts" else [*base, flag, bad]
            assert_refused(name, with_out(name, argv, here / "o"), capsys, before, here)
            tried += 1
    for dest, action in options.items():
        if isinstance(action.type, cli.Number) and not action.type._fits(10**12) and action.option_strings:
            argv = [*base, action.option_strings[0], str(10**12)]
            assert_refused(name, with_out(name, argv, here / "o"), capsys, before, here)
            tried += 1
    if not tried:
        pytest.skip(f"train.{name} takes no table size, agent or bounded size")


@pytest.mark.parametrize("name", jobs())
def test_every_size_a_job_takes_has_a_bound(name):
    """A number a job takes (a flag, or a training setting) cannot be 10**12: memory and time stay finite, and
    seeds stay within the 32 bits that Stable-Baselines3 and OpenSpiel take."""
    rules = [(a.dest, a.type) for a in actions(name) if isinstance(a.type, cli.Number)]
    dests = {a.dest for a in actions(name)}  # a training job's flags are train.learn.args.Args's fields
    fields = [f for f in dataclasses.fields(Args) if f.name in dests and "check" in f.metadata]
    rules += [(f.name, f.metadata["check"]) for f in fields]
    unbounded = [dest for dest, rule in rules if rule.kind is int and rule._fits(10**12)]
    assert not unbounded, f"train.{name} takes any size for {unbounded}: give each a bound (train.runner.cli.MAX_*)"


@pytest.mark.parametrize("name", NAMES)
def test_a_jobs_declared_flags_are_its_own(name):
    """JOB.writes and JOB.agents name flags the job has (a renamed flag would silently leave the declaration)."""
    dests = {action.dest for action in actions(name)}
    job = job_of(name)
    assert set(job.writes) <= dests and set(job.agents) <= dests, (set(job.writes) | set(job.agents)) - dests
    assert not set(job.writes) & set(job.agents)


def _made_during(name: str, argv: list[str], capsys) -> set[str]:
    """The agents (their registry names) made while ``argv`` is checked, the work not run."""
    made = []
    original = watch.record_agents(made)
    try:
        _accepted(name, argv, capsys)
    finally:
        agents.Policy.__init__ = original
    return set(made)


@pytest.mark.parametrize("name", jobs(fast=True))
def test_every_flag_that_feeds_the_agent_factories_is_declared_an_agent_flag(name, here, capsys):
    """Found by what the job does: each flag not declared in JOB.agents is given an agent's name the example does
    not use; if that agent is then made, the flag names agents undeclared — and so unchecked by the refusal tests
    (a flag that falls back to random on a name it does not know would pass them)."""
    base = flags_only(name, here.parent)
    if base is None:
        pytest.skip(f"train.{name}'s example needs inputs that take a training run to make")
    plain = _made_during(name, with_out(name, base, here / "o"), capsys)
    remove_new(here, set())
    probe = next(n for n in ("random_card", "fewest_copies", "control", "random") if n not in plain)
    for action in undeclared(name):
        argv = [*base, action.option_strings[-1], probe] if action.option_strings else [probe, *base[1:]]
        made = _made_during(name, with_out(name, argv, here / "o"), capsys)
        assert probe not in made, f"train.{name} {action.dest}: it names agents; declare it in JOB.agents"
        remove_new(here, set())


BAD_VALUES = ("no_such_agent", str(10**12), "-1", "nan")


class _Accepted(BaseException):
    """Raised where the work would start: the flags passed every check."""


def _accepted(name: str, argv: list[str], capsys) -> tuple[bool, int, str]:
    """Whether ``argv`` passes the job's checks (the work not run), else its exit status and stderr."""

    def stop():
        raise _Accepted

    runner.work_started.append(stop)
    try:
        status, err = run(name, argv, capsys)
    except _Accepted:
        return True, 0, ""
    except Exception as error:  # what would be a traceback on the command line
        return False, 1, f"Traceback: {type(error).__name__}: {error}"
    finally:
        runner.work_started.remove(stop)
    return False, status, err


def bad_commands(name: str, base: list[str]) -> list[list[str]]:
    """The example's flags with each flag that takes values given each bad value (positionals too, first); a flag
    that takes any text, an unknown name only."""
    commands = []
    for action in actions(name):
        if action.nargs == 0 or action.dest in ("help", "out"):
            continue
        free_text = action.type in (None, str) and not action.choices  # every bad value is just a name to it
        for bad in BAD_VALUES[:1] if free_text else BAD_VALUES:
            if action.option_strings:
                commands.append([*base, action.option_strings[-1], bad])
            elif action.nargs in ("+", "*"):
                commands.append([bad, *base])
    return commands


@pytest.mark.slow
@pytest.mark.parametrize("name", jobs())
def test_every_flag_given_a_bad_value_is_refused_in_one_line_or_runs_without_a_traceback(name, here, capsys):
    """Each flag (whatever its name) given an unknown name, 10**12, a negative and NaN: a one-line refusal (exit 2,
    nothing left) or a job that runs — done, or stopped by SIGINT ten seconds into its work — never a traceback.
    An agent flag the job forgets to check fails here, in its work."""
    base = flags_only(name, here.parent)
    if base is None:
        pytest.skip(f"train.{name}'s example needs inputs that take a training run to make")
    before = listing(here)
    for argv in bad_commands(name, base):
        argv = with_out(name, argv, here / "o")
        accepted, status, err = _accepted(name, argv, capsys)
        if not accepted:
            assert_a_refusal(name, argv, status, err, before, here)
            continue
        remove_new(here, before)  # the checks opened the folder: the watched run starts from nothing
        done = watched(name, argv, here, signal.SIGINT, LONG_ENOUGH)
        said = f"train.{name} {' '.join(argv)}: exit {done.status} {done.err[-1500:]}"
        assert done.status in (0, 130) and "Traceback" not in done.err, said
        remove_new(here, before)  # a value that ran may have named a path: the job's to write

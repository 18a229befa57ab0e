"""Progress bars read in an 80-column terminal: the count, elapsed time, ETA and rate of every job's bar fit, with
its longest label and postfix (issue: the training bar showed only "100% [ < , ]" at 80 columns)."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

import pytest

from train.runner.cli import progress_bar, short_name
from train.runner.parts_bar import Part, PartsBar

# (desc, unit, total, postfix): the labels the jobs give their bars, each with its longest postfix
BARS = [
    ("PPO", "step", 614_400, ""),
    ("exploit", "deal", 2 * 8_000 * 12, short_name("ppo:runs/a_rather_long_run_name_s0/final_model.zip") + " 6p"),
    ("deals × seat rotations", "deal", 160_000, ""),
    ("labelling (round 2)", "it", 600_000, ""),
    ("fitting epoch 6/6", "it", 2_000, ""),
]


@pytest.mark.parametrize("desc, unit, total, postfix", BARS)
def test_a_bar_shows_its_count_time_eta_and_rate_in_80_columns(desc, unit, total, postfix):
    out = io.StringIO()
    bar = progress_bar(total=total, desc=desc, unit=unit, unit_scale=True, file=out, ncols=80, dynamic_ncols=False,
                       mininterval=0)  # fmt: skip
    bar.update(total // 3)
    if postfix:
        bar.set_postfix_str(postfix)
    line = str(bar)
    bar.close()
    assert len(line) <= 80, line
    assert f"{bar.format_sizeof(total // 3)}/{bar.format_sizeof(total)}" in line, line  # the count, of the total
    assert "<" in line and f"{unit}/s" in line and line.count(":") >= 2, line  # elapsed<ETA, rate
    assert postfix in line


def test_a_model_file_is_named_by_its_run_on_a_bar():
    assert short_name("ppo:runs/mine/final_model.zip") == "ppo:mine"
    assert short_name("ppo:models/big.zip") == "ppo:big.zip"
    assert short_name("pimc:128") == "pimc:128"
    assert len(short_name("ppo:runs/an_extremely_long_run_name/final_model.zip")) == 16


@pytest.fixture
def clock(monkeypatch):
    """time.perf_counter as a list's first item, moved by the test."""
    now = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    return now


def shown(parts: PartsBar) -> str:
    return parts.bar.unit


def test_parts_of_unequal_cost_are_timed_by_the_last_of_their_kind_and_by_their_own_deals(clock):
    cost = {"cheap": 1.0, "dear": 10.0}  # seconds a unit
    parts = [Part("c1", "cheap", 10), Part("d1", "dear", 10), Part("c2", "cheap", 10), Part("d2", "dear", 20)]
    bar = PartsBar(parts, "card", disable=True)
    seen = []
    for part in bar:
        seen.append(shown(bar))
        if part.label == "d2":  # a part that reports its units: timed by its own rate (here 5 s a unit)
            clock[0] += 25
            bar.advance(5)
            seen.append(shown(bar))
            clock[0] += 75
        else:
            clock[0] += 5 if part.label == "c1" else cost[part.kind] * part.size  # c1: half its kind's later rate
    assert seen[0] == "0/4 c1 [00:00<?]"  # nothing measured yet: no time left is promised
    assert seen[1] == "1/4 d1 [00:05<00:20]"  # unmet kinds at the mean rate of the finished parts (0.5 s a unit)
    assert seen[2] == "2/4 c2 [01:45<03:25]"  # c2 at its kind's last rate (0.5), d2 at d1's (10 s a unit)
    assert seen[3] == "3/4 d2 [01:55<03:20]"  # the running part, as one of its kind until it reports
    assert seen[4] == "3/4 d2 [02:20<01:15]"  # then by its own 5 s a unit: 15 units left
    assert shown(bar) == "4/4 [03:35<00:00]"


def test_a_parts_bar_reads_in_80_columns_with_the_longest_labels(capsys):
    labels = ["most_copies 8p", "own copies 8p", short_name("ppo:runs/a_rather_long_run_name_s0/final_model.zip")]
    bar = PartsBar([Part(label, label, 1) for label in labels] * 12, "score card")
    for _ in bar:
        pass
    lines = capsys.readouterr().err.replace("\r", "\n").splitlines()
    assert any("36/36" in line for line in lines), lines
    assert max(map(len, lines)) <= 80, max(lines, key=len)


def test_the_training_bar_moves_through_each_update_and_is_exact_at_each_rollouts_end(clock, capsys):
    torch = pytest.importorskip("torch")
    from train.learn.callbacks import TrainingBar

    weights = torch.nn.Linear(2, 1)
    optimiser = torch.optim.SGD(weights.parameters(), lr=0.1)
    env = SimpleNamespace(num_envs=4)
    model = SimpleNamespace(n_envs=4, n_steps=2, n_epochs=2, batch_size=4, num_timesteps=0, get_env=lambda: env,
                            policy=SimpleNamespace(optimizer=optimiser))  # fmt: skip
    bar = TrainingBar("PPO", "details")
    bar.init_callback(model)
    bar.on_training_start({"total_timesteps": 16}, {})  # two rollouts of 8, each 2 epochs of 2 batches
    counts = []
    for _ in range(2):
        bar.on_rollout_start()
        for _ in range(2):  # collection: 1 s a step
            clock[0] += 1
            model.num_timesteps += 4
            bar.on_step()
            counts.append(bar.bar.n)
        bar.on_rollout_end()
        counts.append(bar.bar.n)
        for _ in range(4):  # the update: 3 s an optimiser step
            clock[0] += 3
            weights(torch.ones(2)).sum().backward()
            optimiser.step()
            counts.append(bar.bar.n)
    bar.on_training_end()
    assert counts[:7] == [2, 4, 4, 5, 6, 7, 8]  # half and half before a rollout is measured; 8 at its end
    collect = 1 / 13  # the first rollout: 1 s of collection (from the bar's opening) and 12 s of update
    assert counts[7:] == pytest.approx([8 + 4 * collect, 8 + 8 * collect] + [8 + 8 * collect + 2 * (1 - collect) * k
                                                                            for k in range(5)])  # fmt: skip
    assert bar.bar.n == 16 and counts == sorted(counts)
    assert bar.hook is not None and not optimiser._optimizer_step_post_hooks  # the hook went with the run


def test_parts_that_finish_in_any_order_are_timed_between_finishes(clock):
    parts = [Part("3p", "3", 1), Part("4p", "4", 1), Part("3p", "3", 1), Part("4p", "4", 1)]
    with PartsBar(parts, "league", disable=True) as bar:
        assert shown(bar) == "0/4 [00:00<?]"
        clock[0] += 2
        bar.finished(parts[1])  # a 4-player table first: 2 s
        assert shown(bar) == "1/4 [00:02<00:06]"  # the 3-player ones at the mean, the other 4-player one at its own
        clock[0] += 1
        bar.finished(parts[0])
        assert shown(bar) == "2/4 [00:03<00:03]"
    assert shown(bar) == "2/4 [00:03<00:03]" and len(bar.todo) == 2


def test_parts_run_kind_by_kind_in_turn_so_every_kind_is_timed_after_one_round(clock):
    parts = [Part(f"{kind}{n}", kind, 1) for kind in "abc" for n in range(3 if kind != "c" else 1)]
    played = [part.label for part in PartsBar(parts, "card", disable=True)]
    assert played == ["a0", "b0", "c0", "a1", "b1", "a2", "b2"]


def test_a_slow_part_grows_the_time_left_and_never_moves_the_bar_back(clock):
    """The benchmark's case: cheap candidates, then a search hundreds of times slower that reports its first deals
    late. The bar holds while the estimate grows; the time left is unknown once the part overruns its estimate,
    then the part's own rate."""
    parts = [Part("random", "random", 100), Part("most_copies", "most_copies", 100), Part("pimc", "pimc:128", 100)]
    bar = PartsBar(parts, "evaluating", disable=True)
    fractions, seen = [], []
    for part in bar:
        if part.label != "pimc":
            clock[0] += 1.0
            continue
        for _ in range(3):  # 85 s before its first chunk reports
            clock[0] += 30
            bar.advance(0)
            fractions.append(bar.bar.n / bar.bar.total)
            seen.append(shown(bar))
        bar.advance(10)  # 10 deals in 90 s: 810 s left
        fractions.append(bar.bar.n / bar.bar.total)
        seen.append(shown(bar))
        clock[0] += 810
    assert fractions == sorted(fractions), fractions  # never backwards
    assert seen[1].endswith("[01:02<?]") and seen[2].endswith("[01:32<?]")  # overdue: not a time that sits still
    assert seen[3].endswith("[01:32<13:30]")

"""Progress bars read in an 80-column terminal: the count, elapsed time, ETA and rate of every job's bar fit, with
its longest label and postfix (issue: the training bar showed only "100% [ < , ]" at 80 columns)."""

from __future__ import annotations

import io

import pytest

from train.runner.cli import progress_bar, short_name

# (desc, unit, total, postfix): the labels the jobs give their bars, each with its longest postfix
BARS = [
    ("PPO", "step", 614_400, ""),
    ("evaluating", "deal", 140_000, ""),
    ("exploit", "deal", 2 * 8_000 * 12, short_name("ppo:runs/a_rather_long_run_name_s0/final_model.zip") + " 6p"),
    ("score card", "part", 28, "most_copies 8p"),
    ("league", "table", 560, ""),
    ("matrix", "unit", 192, ""),
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

"""The clairvoyant bound (train.oracle): a player that sees every hand must beat most_copies clearly."""

import pytest

from train import oracle


@pytest.mark.slow
def test_clairvoyant_lead_beats_most_copies_and_repeats_itself():
    rows = oracle.bound(3, "random", deals=3000, repeats=2, seed=3)
    clairvoyant = rows[1]
    assert clairvoyant.name == "clairvoyant" and clairvoyant.deals == 3000
    # it gains about five chips per deal here; a lead chosen without the values would lose to most_copies
    assert clairvoyant.diff_vs_reference - clairvoyant.diff_ci95 > 2.0
    assert oracle.bound(3, "random", deals=3000, repeats=2, seed=3) == rows


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(opponent="ppo"), "policy the kernel plays"),
        (dict(opponent="random", rules="poker"), "unknown rules preset"),
        (dict(opponent="random", repeats=0), "repeats"),
        (dict(opponent="random", deals=0), "deals"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        oracle.bound(4, **kwargs)


def test_command_line_prints_a_row_per_table(capsys):
    oracle.main(["--players", "3", "--opponents", "most_copies", "--deals", "500", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "| 3 | most_copies |" in out

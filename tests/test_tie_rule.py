"""What the tie rule costs (train.tie_rule): at 6-player tables of copies that lead the lowest of their tied
ranks, drawing among them out-earns leading the lowest too, on the same deals; a bad rule is a clear error."""

import pytest

pytest.importorskip("sb3_contrib")

from train import tie_rule  # noqa: E402


def test_drawing_ties_beats_the_lowest_at_a_table_that_plays_the_lowest():
    rows = {row.name: row for row in tie_rule.at_tables_of("lowest", 6, deals=6000, seed=3)}
    assert set(rows) == {"most_copies", "ppo (random ties)", "ppo (lowest ties)"}
    drawn, lowest = rows["ppo (random ties)"], rows["ppo (lowest ties)"]
    # about a chip a deal on 100,000 deals; 6,000 give a CI of about ±0.3 on each
    assert drawn.diff_vs_reference - lowest.diff_vs_reference > 0.4
    assert tie_rule.at_tables_of("lowest", 6, deals=6000, seed=3)[1] == rows["ppo (random ties)"]


def test_an_unknown_tie_rule_is_a_clear_error():
    with pytest.raises(ValueError, match="tie rule 'highest'; allowed: random, lowest"):
        tie_rule.at_tables_of("highest", 4, deals=10, seed=0)

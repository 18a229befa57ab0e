"""Exact best responses on the small research deck (``Rules.ranks``): the enumeration's weights, its values
against simulation and against OpenSpiel's exact ``best_response``, and the exploit job's exact column."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import agents
from snipsnap_env.batch import play_deals
from train import exploit
from train.measure.exact import UnknownProbabilities, best_response_value, count_worlds, hand_sizes, holdings


@pytest.mark.parametrize("players, ranks", [(3, 2), (3, 3), (4, 3), (5, 2)])
def test_the_holdings_matrices_count_every_card_deal_once(players, ranks):
    for dealer in range(players):
        sizes = hand_sizes(players, 4 * ranks, dealer)
        matrices = list(holdings(sizes, ranks))
        assert all((m.sum(axis=1) == sizes).all() and (m.sum(axis=0) == 4).all() for m, _ in matrices)
        assert len({m.tobytes() for m, _ in matrices}) == len(matrices)
        deals = math.factorial(4 * ranks) // math.prod(map(math.factorial, sizes))
        assert sum(count for _, count in matrices) == deals


def test_a_deck_too_large_to_enumerate_is_refused_in_one_line():
    assert count_worlds(3, "scarne") > 20_000
    with pytest.raises(ValueError, match="more than the 20,000 an exact best response enumerates"):
        best_response_value(agents.make("random"), 3, "scarne")


def test_a_search_target_has_no_exact_probabilities():
    with pytest.raises(UnknownProbabilities, match="needs the target's action probabilities"):
        best_response_value(agents.make("pimc", samples=4, opponent_model="random"), 3, "scarne:ranks=2")


@pytest.mark.slow
def test_the_targets_exact_values_by_seat_agree_with_play_in_the_kernel():
    """A table of most_copies on the 3-rank deck: the exact value of each position, as the enumeration weighs
    the deals, against 200,000 deals the kernel deals and plays."""
    exact = [best_response_value(agents.make("most_copies"), 3, "scarne:ranks=3", seat=s) for s in range(3)]
    assert all(abs(v.target) < 1e-9 for v in exact)  # N copies of one policy: 0 a seat, averaged over positions
    assert all(v.best_response == pytest.approx(exact[0].best_response) for v in exact)  # every seat alike
    chips, dealers, _ = play_deals(200_000, 3, "scarne:ranks=3", ["most_copies"] * 3, seed=5, with_details=True)
    by_position = np.array([[chips[dealers == d, (d + 1 + k) % 3].mean() for k in range(3)] for d in range(3)]).mean(0)
    by_position_se = np.array([chips[:, k].std() for k in range(3)]) / np.sqrt(len(chips) / 3)
    target_positions = np.array(exact[0].target_by_position)
    assert np.all(np.abs(by_position - target_positions) < 4 * by_position_se), (by_position, target_positions)


@pytest.mark.slow
def test_the_best_response_is_at_least_the_target_and_exact_where_nobody_chooses():
    for name in ("random", "most_copies", "fewest_copies"):
        values = best_response_value(agents.make(name), 3, "scarne:ranks=3")
        assert values.exploitability >= -1e-9
        assert all(b >= t - 1e-9 for b, t in zip(values.by_position, values.target_by_position))
    one_rank = best_response_value(agents.make("random"), 3, "scarne:ranks=1")  # no lead is ever a choice
    assert one_rank.exploitability == pytest.approx(0.0, abs=1e-12)
    assert best_response_value(agents.make("random"), 3, "scarne:ranks=3").exploitability > 0.3


@pytest.mark.slow
def test_the_exploit_job_reports_the_exact_answer_beside_its_estimate(tmp_path):
    (row,) = exploit.main(["--target", "random", "--players", "3", "--rules", "scarne:ranks=3", "--deals", "4000",
                           "--samples", "32", "--out", str(tmp_path / "e"), "--no-progress"])  # fmt: skip
    exact = best_response_value(agents.make("random"), 3, "scarne:ranks=3").exploitability
    assert row["exact_exploitability"] == pytest.approx(exact)
    assert abs(row["exploitability"] - exact) < row["exploitability_ci95"] + 0.1  # the search, near the truth
    assert f"{exact:+.3f} |" in (tmp_path / "e" / "exploit.md").read_text()


@pytest.mark.parametrize("target", ["random", "most_copies", "fewest_copies"])
@pytest.mark.slow
def test_the_walk_agrees_with_openspiels_exact_best_response(target):
    """OpenSpiel's ``best_response`` on the OpenSpiel game of a 2-rank deck at 3 players, from a root where the
    dealer and the first two cards are drawn (the other six cards: 720 chance paths; the whole game's 120,960
    take OpenSpiel's Python tree walk past 15 minutes), against the walk over the same deals, in every seat."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import best_response

    import snipsnap_env.openspiel_game  # noqa: F401 (registers the game)
    from snipsnap_env.cards import deal_pack
    from snipsnap_env.observation import encode
    from train.measure.exact import action_probabilities, values_over_deals

    agent = agents.make(target)

    class Target(os_policy.Policy):
        def __init__(self, game):
            super().__init__(game, list(range(game.num_players())))

        def action_probabilities(self, state, player_id=None):
            legal = state.legal_actions()
            if len(legal) == 1:
                return {legal[0]: 1.0}
            obs, mask = encode(state.match, state.current_player())[None], state.match.deal.legal_mask()[None]
            probs = action_probabilities(agent, obs, mask)[0]
            return {a: float(probs[a]) for a in legal}

    game = pyspiel.load_game("python_snipsnap", {"players": 3, "rules": "scarne:ranks=2"})
    root = game.new_initial_state()
    dealer, first = 1, [0, 14]  # AC to seat 2, 2D to seat 0
    for outcome in (dealer, *first):
        root.apply_action(outcome)
    rest = [card for card in (0, 1, 13, 14, 26, 27, 39, 40) if card not in first]
    deals = []
    for order in itertools.permutations(rest):
        hands = deal_pack([*first, *order], 3, dealer)
        matrix = np.array([[sum(card % 13 == r for card in hand) for r in range(2)] for hand in hands])
        deals.append((matrix, 1 / math.factorial(len(rest))))
    gaps = []
    for seat in range(3):
        value = best_response.BestResponsePolicy(game, seat, Target(game), root_state=root).value(root)
        walked, own = values_over_deals(agent, "scarne:ranks=2", seat, dealer, deals)
        assert value == pytest.approx(walked, abs=1e-9), seat
        gaps.append(walked - own)
    assert min(gaps) >= -1e-9 and (target == "most_copies" or max(gaps) > 0.5)  # somewhere a choice to exploit

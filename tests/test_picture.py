"""The table as a picture: a golden image of a scripted deal, every table size, the viewer's hand, the envs.

After a deliberate change to the drawing, rewrite the golden image with ``python tests/test_picture.py``
and look at it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import snipsnap_env
from snipsnap_env.cards import deal_pack, shuffled_pack
from snipsnap_env.engine import Match
from snipsnap_env.picture import HEIGHT, WIDTH, table_image
from snipsnap_env.rules import make_rules

GOLDEN = Path(__file__).parent / "golden" / "table_earl_6p.png"


def scripted_table():
    """A 6-player Earl of Coventry deal, nine turns in (an open set with its rhymes), seen by seat 2."""
    rng = np.random.default_rng(3)
    match = Match(make_rules("earl_of_coventry"), 6)
    match.start(rng, hands=deal_pack(shuffled_pack(rng), 6, 4), dealer=4)
    events = []
    for turn in range(9):
        legal = match.deal.legal_actions()
        events = match.apply(legal[turn % len(legal)])
    return match, events


def test_a_scripted_deal_draws_the_golden_image():
    match, events = scripted_table()
    image = table_image(match, viewer=2, last_events=events)
    golden = np.asarray(Image.open(GOLDEN).convert("RGB"))
    if not np.array_equal(image, golden):
        Image.fromarray(image).save(GOLDEN.with_name("actual_" + GOLDEN.name))
        changed = int((image != golden).any(axis=2).sum())
        pytest.fail(f"{changed} pixels differ from {GOLDEN.name}; the drawing is in actual_{GOLDEN.name}")


@pytest.mark.parametrize("num_players", range(3, 9))
def test_every_table_size_draws_every_seat_and_the_viewers_hand(num_players):
    env = snipsnap_env.raw_env(num_players=num_players, render_mode="rgb_array")
    env.reset(seed=num_players)
    hidden = env.render()
    assert hidden.shape == (HEIGHT, WIDTH, 3) and hidden.dtype == np.uint8
    env.viewer = 0
    shown = env.render()
    assert (hidden[-130:] != shown[-130:]).any()  # the viewer's hand, face up along the bottom
    assert np.array_equal(shown, env.render())  # the same state, the same pixels


def test_the_same_seed_draws_the_same_frames_and_play_changes_them():
    frames = []
    for _ in range(2):
        env = snipsnap_env.env(num_players=4, render_mode="rgb_array")
        env.reset(seed=11)
        run = [env.render()]
        for agent in env.agent_iter(max_iter=12):
            obs, *_ = env.last()
            env.step(int(np.flatnonzero(obs["action_mask"])[0]))
            run.append(env.render())
        frames.append(run)
    assert all(np.array_equal(a, b) for a, b in zip(*frames))
    assert not np.array_equal(frames[0][0], frames[0][-1])


def test_the_single_seat_env_draws_the_learners_view():
    env = snipsnap_env.SingleSeatEnv(5, render_mode="rgb_array", learner_seat=3)
    env.reset(seed=1)
    image = env.render()
    assert image.shape == (HEIGHT, WIDTH, 3)


if __name__ == "__main__":
    match, events = scripted_table()
    Image.fromarray(table_image(match, viewer=2, last_events=events)).save(GOLDEN)
    print(f"wrote {GOLDEN}")

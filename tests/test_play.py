"""The terminal table and recorded deals: what a person sees, and GIFs that hold every turn."""

from __future__ import annotations

import io

import pytest
from PIL import Image

pytest.importorskip("rich", reason="the terminal table needs rich (the train extra)")

from rich.console import Console  # noqa: E402

from train import play  # noqa: E402


def quiet_console() -> Console:
    return Console(file=io.StringIO(), width=200, color_system=None)


def test_a_person_sees_their_hand_before_each_lead_and_every_event_once():
    console = quiet_console()
    leads = []

    def first_legal(question):
        leads.append(question)
        return question.split("(")[1].split()[0].rstrip(")")  # the first rank offered

    chips = play.play(3, "scarne", ["random"], seat=1, seed=4, prompt=first_legal, console=console)
    out = console.file.getvalue()
    assert sum(chips) == 300  # chips move between the seats, none appear or vanish
    assert leads and out.count("your hand:") >= len(leads)  # the table comes before every lead
    assert "player_1 (you)" in out and "is out of cards and wins the deal" in out
    assert out.count("player_2 deals") + out.count("player_0 deals") + out.count("player_1 deals") == 1


def test_a_recorded_deal_has_a_frame_per_turn(tmp_path):
    path, console = tmp_path / "deal.gif", quiet_console()
    play.play(3, "scarne", ["most_copies"], seat=None, seed=2, record=str(path), console=console)
    lines = console.file.getvalue().splitlines()
    turns = sum(any(verb in line for verb in (" leads ", " plays ", " passes")) for line in lines)
    with Image.open(path) as gif:
        assert gif.size == (960, 660)
        assert gif.n_frames == 1 + turns  # the deal as dealt, then one frame per turn


@pytest.mark.parametrize(
    "name, words", [("deal.png", "write a .gif or an .mp4"), ("missing/deal.gif", "does not exist")]
)
def test_a_bad_recording_file_is_refused_before_the_deal(tmp_path, name, words):
    with pytest.raises(ValueError, match=words):
        play.play(3, "scarne", ["random"], seat=None, seed=1, record=str(tmp_path / name), console=quiet_console())


def test_every_kind_of_event_has_a_tone_that_every_view_styles():
    """A kind of event is declared once (snipsnap_env.events) with its tone; the terminal and the browser tables
    style tones, so a new kind needs nothing in either."""
    from pathlib import Path

    from snipsnap_env.events import TONES, EventKind, Tone

    assert set(TONES) == set(EventKind) and all(kind.tone in Tone for kind in EventKind)
    assert set(play.STYLES) == set(Tone)
    page = (Path(play.__file__).parent / "web" / "table.html").read_text()
    for tone in Tone:
        assert f"#log li.{tone.value} " in page, f"table.html does not style the tone {tone.value}"

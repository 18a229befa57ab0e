"""The table as a picture, for ``render_mode="rgb_array"``, recorded deals and notebooks.

Seats sit round an oval table (the viewer, or seat 0, at the bottom; the next seat on its left, clockwise
on screen), each with its name, cards in hand (face down) and chips; the seat to act is outlined, the
dealer has the button, the winner is gold. The open set's cards lie face up in the middle with their calls
(Snip/Snap/Snorem or the Coventry rhyme), the pot beside them. With a ``viewer`` seat, its hand is shown
face up along the bottom.

Drawn with Pillow's own shapes and its built-in font (suits are drawn, not typed), so a state gives the
same pixels on every machine with the same Pillow version. About 5 ms a frame.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .cards import RANK_NAMES, rank_of, suit_of
from .engine import Match
from .events import Event
from .render import headline, open_set_events

WIDTH, HEIGHT = 960, 660
CENTRE, RADII = (WIDTH // 2, 290), (350, 190)
FELT, TABLE, RIM = (22, 84, 48), (31, 118, 64), (92, 62, 34)
INK, RED, PAPER, BACK = (20, 20, 20), (196, 30, 40), (250, 248, 240), (40, 64, 140)
GOLD, TO_ACT, PANEL = (232, 190, 60), (255, 226, 80), (236, 236, 228)
RED_SUITS = (1, 2)  # diamonds, hearts (cards.SUIT_NAMES: C D H S)


@functools.lru_cache(maxsize=None)
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def table_image(match: Match, viewer: int | None = None, last_events: list[Event] = ()) -> np.ndarray:
    """The table as an (HEIGHT, WIDTH, 3) uint8 image; ``viewer``'s hand face up when given."""
    image = Image.new("RGB", (WIDTH, HEIGHT), FELT)
    draw = ImageDraw.Draw(image)
    (cx, cy), (rx, ry) = CENTRE, RADII
    draw.ellipse((cx - rx - 14, cy - ry - 14, cx + rx + 14, cy + ry + 14), fill=RIM)
    draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=TABLE)
    deal, n = match.deal, match.num_players
    deal_number = min(match.deals_played + 1, match.num_deals)
    title = f"Snip Snap Snorem  ·  {n} players  ·  deal {deal_number} of {match.num_deals}"
    draw.text((16, 12), title, font=font(18), fill=PAPER)
    bottom = 0 if viewer is None else viewer
    for seat in range(n):
        angle = math.pi / 2 + 2 * math.pi * ((seat - bottom) % n) / n
        _draw_seat(draw, match, seat, cx + rx * math.cos(angle), cy + ry * math.sin(angle), angle)
    _draw_centre(draw, match)
    if viewer is not None:
        _draw_hand(draw, deal.hand(viewer), f"player_{viewer}'s hand")
    if last_events:
        draw.text((16, HEIGHT - 28), str(last_events[-1]), font=font(15), fill=PAPER)
    return np.asarray(image)


def _draw_seat(draw, match: Match, seat: int, x: float, y: float, angle: float) -> None:
    deal = match.deal
    w, h = 150, 52
    box = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    acting = not deal.over and deal.to_act == seat
    fill = GOLD if deal.winner == seat else PANEL
    draw.rounded_rectangle(box, radius=8, fill=fill, outline=TO_ACT if acting else INK, width=5 if acting else 1)
    draw.text((box[0] + 10, box[1] + 6), f"player_{seat}", font=font(16), fill=INK)
    score = match.score[seat]
    unit = f"{score} chips" if match.rules.chips else f"{score:+.2f} points"
    draw.text((box[0] + 10, box[1] + 28), f"{deal.hand_size[seat]} cards  ·  {unit}", font=font(13), fill=INK)
    if seat == deal.dealer:
        bx, by = box[2] - 4, box[1] + 4
        draw.ellipse((bx - 12, by - 12, bx + 12, by + 12), fill=PAPER, outline=INK, width=2)
        draw.text((bx, by), "D", font=font(14), fill=INK, anchor="mm")
    # the hand, face down, on the table side of the panel
    inward = (-math.cos(angle), -math.sin(angle))
    shown = min(deal.hand_size[seat], 12)
    fx, fy = x + inward[0] * 140 - (shown * 7 + 11) / 2, y + inward[1] * 58 - 13  # clear of the panel
    for i in range(shown):
        left = fx + i * 7
        draw.rounded_rectangle((left, fy, left + 18, fy + 26), radius=3, fill=BACK, outline=PAPER)


def _draw_centre(draw, match: Match) -> None:
    deal, (cx, cy) = match.deal, CENTRE
    if match.rules.chips:
        draw.text((cx, cy + 88), f"pot: {deal.pot} chips", font=font(16), fill=PAPER, anchor="mm")
    draw.text((cx, cy - 92), headline(deal), font=font(18), fill=PAPER, anchor="mm")
    played = open_set_events(deal)
    step = 128
    left = cx - step * (len(played) - 1) / 2
    for i, event in enumerate(played):
        x = left + i * step
        draw_card(draw, event.card, x - 28, cy - 62, 56, 80)
        draw.text((x, cy + 28), f"player_{event.seat}", font=font(12), fill=PAPER, anchor="mm")
        for j, line in enumerate(_wrap(event.call, 18)):
            draw.text((x, cy + 46 + 15 * j), line, font=font(13), fill=TO_ACT, anchor="mm")


def _draw_hand(draw, cards: list[int], label: str) -> None:
    draw.text((16, HEIGHT - 118), label, font=font(14), fill=PAPER)
    step = min(50, (WIDTH - 100) / max(len(cards), 1))
    for i, card in enumerate(cards):
        draw_card(draw, card, 16 + i * step, HEIGHT - 98, 46, 66)


def draw_card(draw, card: int, x: float, y: float, w: float, h: float) -> None:
    """A card face: rank in the corner, the suit drawn in the middle."""
    suit = suit_of(card)
    colour = RED if suit in RED_SUITS else INK
    draw.rounded_rectangle((x, y, x + w, y + h), radius=5, fill=PAPER, outline=(120, 120, 120))
    draw.text((x + 5, y + 3), RANK_NAMES[rank_of(card)], font=font(int(h * 0.24)), fill=colour)
    draw_suit(draw, suit, x + w / 2, y + h * 0.6, h * 0.17, colour)


def draw_suit(draw, suit: int, x: float, y: float, s: float, colour) -> None:
    """Clubs, diamonds, hearts, spades (cards.SUIT_NAMES order) as shapes centred on (x, y), size ``s``."""
    r = s / 2
    if suit == 1:  # diamond
        draw.polygon([(x, y - s), (x + 0.72 * s, y), (x, y + s), (x - 0.72 * s, y)], fill=colour)
    elif suit == 2:  # heart: two lobes and a point
        draw.ellipse((x - s, y - s * 0.8, x, y + s * 0.2), fill=colour)
        draw.ellipse((x, y - s * 0.8, x + s, y + s * 0.2), fill=colour)
        draw.polygon([(x - s * 0.97, y - s * 0.15), (x + s * 0.97, y - s * 0.15), (x, y + s)], fill=colour)
    else:  # spade (an upturned heart) or club (three leaves), each on a stem
        draw.polygon([(x, y + s * 0.2), (x - r * 0.8, y + s), (x + r * 0.8, y + s)], fill=colour)
        if suit == 3:
            draw.ellipse((x - s, y - s * 0.2, x, y + s * 0.75), fill=colour)
            draw.ellipse((x, y - s * 0.2, x + s, y + s * 0.75), fill=colour)
            draw.polygon([(x - s * 0.97, y + s * 0.2), (x + s * 0.97, y + s * 0.2), (x, y - s)], fill=colour)
        else:
            for dx, dy in ((0, -r * 1.05), (-r * 1.05, r * 0.45), (r * 1.05, r * 0.45)):
                draw.ellipse((x + dx - r, y + dy - r, x + dx + r, y + dy + r), fill=colour)


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken at spaces."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + [line] if line else lines

"""The table as text, for ``render_mode="ansi"`` / ``"human"`` and for people reading a game.

Shows the deal, the open set with its calls, the hand of the player to act, every seat's hand size
and chips, the pot and the latest events.
"""

from __future__ import annotations

from .cards import RANK_NAMES, card_name, rank_of
from .engine import Match
from .events import Event, EventKind


def open_set_events(deal) -> list[Event]:
    """The lead and plays of the open set, in order (none when no set is open)."""
    if deal.over or deal.is_lead:
        return []
    cards = []
    for event in reversed(deal.events):
        if event.kind in (EventKind.LEAD, EventKind.PLAY) and rank_of(event.card) == deal.open_rank:
            cards.append(event)
            if event.kind is EventKind.LEAD:
                break
    return cards[::-1]


def headline(deal) -> str:
    """The state of the table in a few words: who went out, who leads, or how far the open set is."""
    if deal.over:
        return f"player_{deal.winner} went out"
    if deal.is_lead:
        return f"player_{deal.to_act} leads"
    return f"{RANK_NAMES[deal.open_rank]}s: {deal.played[deal.open_rank]} of 4 played"


def open_set_text(match: Match) -> str:
    """The open set's cards and calls, or who leads next."""
    deal = match.deal
    if deal.over:
        return f"Deal over: player_{deal.winner} went out."
    if deal.is_lead:
        return f"No set open: player_{deal.to_act} leads."
    cards = [
        f"{card_name(e.card)} by player_{e.seat}" + (f" ({e.call})" if e.call else "") for e in open_set_events(deal)
    ]
    rank = RANK_NAMES[deal.open_rank]
    return f"Open set of {rank}s, {deal.played[deal.open_rank]} of 4 played: " + ", ".join(cards)


def table_text(match: Match, last_events: list[Event] = (), viewer: int | None = None) -> str:
    """A multi-line picture of the table, showing the hand of the seat to act, or only ``viewer``'s hand."""
    deal = match.deal
    n = match.num_players
    lines = [
        f"Snip Snap Snorem: {n} players, deal {min(match.deals_played + 1, match.num_deals)} of "
        f"{match.num_deals}, dealer player_{deal.dealer}",
        open_set_text(match),
    ]
    shown = deal.to_act if viewer is None else viewer
    if not deal.over or viewer is not None:
        hand = " ".join(map(card_name, deal.hand(shown)))
        role = "to act" if shown == deal.to_act and not deal.over else "(you)"
        lines.append(f"player_{shown} {role}, holds: {hand}")
    score_name = "chips" if match.rules.chips else "points"
    lines.append(f"{'seat (*to act, D dealer)':<25}{'cards':>6}{score_name:>9}")
    for seat in range(n):
        marks = ("*" if seat == deal.to_act and not deal.over else " ") + ("D" if seat == deal.dealer else " ")
        score = match.score[seat]
        shown = f"{score:>9}" if match.rules.chips else f"{score:>9.2f}"
        lines.append(f"{f'player_{seat}':<10}{marks:<15}{deal.hand_size[seat]:>6}{shown}")
    if match.rules.chips:
        lines.append(f"pot: {deal.pot}")
    if last_events:
        lines.append("last events:")
        lines.extend(f"  {event}" for event in last_events)
    return "\n".join(lines)

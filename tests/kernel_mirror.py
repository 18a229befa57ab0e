"""A plain-Python mirror of the kernel's random streams, dealing and scripted lead choices, so tests can
drive the reference engine with exactly the draws the kernel makes and compare deal for deal."""

from __future__ import annotations

from snipsnap_env.cards import NUM_CARDS, deal_pack
from snipsnap_env.kernel_leads import DRAW, PICKS, POLICIES, lead_score

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
DEAL_MIX = 0xD1B54A32D192ED03


class Stream:
    """splitmix64, as ``snipsnap_env.kernel.uniform``."""

    def __init__(self, state: int):
        self.state = int(state)

    def uniform(self) -> float:
        self.state = (self.state + GOLDEN) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        return (z >> 11) * (1.0 / 9007199254740992.0)


def deal_streams(stream: int, d: int, num_players: int) -> list[Stream]:
    """As ``batch_kernels.deal_streams``: the deal's stream, then one per seat."""
    streams = []
    for i in range(1 + num_players):
        s = Stream(int(stream) ^ (((d * (1 + num_players) + i) * DEAL_MIX) & MASK))
        s.uniform()
        streams.append(s)
    return streams


def deal_from_stream(stream: Stream, num_players: int):
    """As ``kernel.deal_from_stream``: (hands, dealer)."""
    dealer = int(stream.uniform() * num_players)
    pack = list(range(NUM_CARDS))
    for position in range(NUM_CARDS - 1, 0, -1):
        other = int(stream.uniform() * (position + 1))
        pack[position], pack[other] = pack[other], pack[position]
    return deal_pack(pack, num_players, dealer), dealer


def choose_lead(policy: str, deal, stream: Stream) -> int:
    """As ``kernel.choose_lead`` on an engine deal at a lead (the policy's rule read from kernel_leads)."""
    seat = deal.to_act
    legal = deal.legal_actions()
    code = POLICIES.index(policy)
    scores = [lead_score.py_func(code, r, deal.count(seat, r)) for r in legal]
    if PICKS[code] == DRAW:
        k = int(stream.uniform() * sum(scores))
        for r, w in zip(legal, scores):
            k -= w
            if k < 0:
                return r
    best, best_score, ties = -1, 0, 0
    for r, score in zip(legal, scores):
        if best < 0 or score > best_score:
            best, best_score, ties = r, score, 1
        elif score == best_score:
            ties += 1
            if stream.uniform() * ties < 1.0:
                best = r
    return best


def play_out(deal, policies, streams) -> None:
    """Play an engine deal to its end as ``kernel.play_out`` does (seat s draws from ``streams[1 + s]``)."""
    while not deal.over:
        legal = deal.legal_actions()
        if len(legal) == 1:
            deal.apply(legal[0])
        else:
            deal.apply(choose_lead(policies[deal.to_act], deal, streams[1 + deal.to_act]))

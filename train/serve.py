"""A browser table: play Snip Snap Snorem against the agents on a page served on localhost.

    python -m train.serve                     # then open http://127.0.0.1:8000
    python -m train.serve --port 8080 --host 0.0.0.0

The page picks the table size, rules and opponents; you see your own hand and click a rank to lead; forced
plays and the agents' turns happen by themselves and are shown step by step, with the calls, penalties and
settlement; a finished deal can be replayed. Each browser's game is its own (a random game id); the server
checks every request and answers bad ones with a clear 4xx and a JSON ``{"error": ...}``, never a traceback.

JSON API: ``POST /api/games`` {players, rules, opponents, seat, seed} → a new game;
``GET /api/games/<id>``; ``POST /api/games/<id>/lead`` {rank: "7"}; ``GET /api/games/<id>/replay``.
"""

from __future__ import annotations

import argparse
import secrets
import threading
from collections import OrderedDict
from pathlib import Path

import agents
import snipsnap_env
from snipsnap_env.cards import RANK_NAMES, card_name
from snipsnap_env.render import headline, open_set_events
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS

from .cli import new_parser

PAGE = Path(__file__).with_name("web") / "table.html"
OPPONENTS = ("random", "most_copies", "fewest_copies", "control", "pimc", "ppo")
MAX_GAMES = 500  # the oldest untouched game is dropped beyond this


class BadRequest(ValueError):
    """A request the server refuses: ``status`` and a message that names the problem."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class TableGame:
    """One deal between a person in ``seat`` and agents in the other seats."""

    def __init__(self, players: int, rules: str, opponents: list[str], seat: int, seed: int):
        self.players, self.rules, self.opponents, self.seat = players, rules, opponents, seat
        self.env = snipsnap_env.raw_env(num_players=players, rules=rules, viewer=seat)
        self.env.reset(seed=seed)
        others = [s for s in range(players) if s != seat]
        self.policies = {s: agents.make(opponents[i % len(opponents)], seed=seed + 1 + i) for i, s in enumerate(others)}
        self.steps = [self._step(self.match.deal.events)]  # the deal as dealt (and the ante)
        self.steps += self._advance()

    @property
    def match(self):
        return self.env.unwrapped.match

    def legal_leads(self) -> list[str]:
        """The ranks the person may lead now (none unless it is their real choice)."""
        deal = self.match.deal
        if deal.over or deal.to_act != self.seat or not deal.is_lead:
            return []
        return [RANK_NAMES[a] for a in deal.legal_actions()]

    def lead(self, rank: str) -> list[dict]:
        """The person leads ``rank``; then the table plays on until their next choice. Returns the new steps."""
        legal = self.legal_leads()
        if not legal:
            raise BadRequest("it is not your lead: " + self.table()["headline"], 409)
        if rank not in legal:
            raise BadRequest(f"{rank!r} is not a rank you can lead; legal leads: {' '.join(legal)}", 422)
        new = [self._apply(RANK_NAMES.index(rank))]
        new += self._advance()
        self.steps += new
        return new

    def _advance(self) -> list[dict]:
        """Play every turn that is not the person's real choice: forced turns and the agents' leads."""
        steps = []
        env = self.env
        while not self.match.over:
            deal = self.match.deal
            legal = deal.legal_actions()
            if deal.to_act == self.seat and len(legal) > 1:
                break
            if len(legal) == 1:
                action = legal[0]
            else:
                obs = env.observe(env.agent_selection)
                action = int(self.policies[deal.to_act](obs))
            steps.append(self._apply(action))
        return steps

    def _apply(self, action: int) -> dict:
        self.env.step(action)
        return self._step(self.env.unwrapped.last_events)

    def _step(self, events) -> dict:
        return {"events": [event_json(e) for e in events], "table": self.table()}

    def table(self) -> dict:
        """What the person may see: every seat's cards and chips, the open set, the pot, their own hand."""
        match, deal = self.match, self.match.deal
        yours = deal.is_lead and not deal.over and deal.to_act == self.seat
        return {
            "headline": "your lead" if yours else headline(deal),
            "to_act": None if deal.over else deal.to_act,
            "dealer": deal.dealer,
            "hand_sizes": list(deal.hand_size),
            "scores": [float(s) for s in match.score],
            "pot": deal.pot,
            "open_set": [event_json(e) for e in open_set_events(deal)],
            "hand": [card_name(c) for c in deal.hand(self.seat)],
            "over": deal.over,
            "winner": deal.winner,
        }

    def state(self, steps: list[dict]) -> dict:
        return {
            "players": self.players,
            "rules": self.rules,
            "opponents": self.opponents,
            "seat": self.seat,
            "chips": self.match.rules.chips,
            "steps": steps,
            "table": self.table(),
            "legal": self.legal_leads(),
        }


def event_json(event) -> dict:
    return {
        "text": str(event),
        "kind": event.kind.value,
        "seat": event.seat,
        "card": None if event.card is None else card_name(event.card),
        "call": event.call,
    }


def new_game_settings(body) -> dict:
    """The settings of ``POST /api/games``, checked: every problem named."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    unknown = sorted(set(body) - {"players", "rules", "opponents", "seat", "seed"})
    if unknown:
        raise BadRequest(f"unknown settings {unknown}; known: players, rules, opponents, seat, seed")
    players = body.get("players", 4)
    if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise BadRequest(f"players got {players!r}; allowed: a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}")
    rules = body.get("rules", "scarne")
    if rules not in PRESETS:
        raise BadRequest(f"rules got {rules!r}; allowed: {', '.join(sorted(PRESETS))}")
    opponents = body.get("opponents", ["most_copies"])
    if (
        not isinstance(opponents, list)
        or not 1 <= len(opponents) <= MAX_PLAYERS
        or not all(isinstance(o, str) and o in OPPONENTS for o in opponents)
    ):
        raise BadRequest(f"opponents got {opponents!r}; allowed: a list of 1 to 8 of {', '.join(OPPONENTS)}")
    seat = body.get("seat", 0)
    if type(seat) is not int or not 0 <= seat < players:
        raise BadRequest(f"seat got {seat!r}; allowed: a seat from 0 to {players - 1}")
    seed = body.get("seed", secrets.randbelow(2**31))
    if type(seed) is not int or seed < 0:
        raise BadRequest(f"seed got {seed!r}; allowed: a whole number of at least 0")
    return {"players": players, "rules": rules, "opponents": opponents, "seat": seat, "seed": seed}


def create_app():
    """The Flask app (Flask comes with the ``web`` extra; only the server needs it)."""
    from flask import Flask, jsonify, request
    from werkzeug.exceptions import HTTPException

    app = Flask(__name__)
    games: OrderedDict[str, TableGame] = OrderedDict()
    lock = threading.Lock()
    app.config["games"] = games  # (tests read the engine's side of a game here)

    def find(game_id: str) -> TableGame:
        game = games.get(game_id)
        if game is None:
            raise BadRequest(f"no game {game_id!r} (games live until the server restarts)", 404)
        games.move_to_end(game_id)
        return game

    @app.get("/")
    def page():
        return PAGE.read_text(), 200, {"Content-Type": "text/html; charset=utf-8"}

    @app.post("/api/games")
    def new_game():
        body = None
        if request.data:
            body = request.get_json(force=True, silent=True)
            if body is None:
                raise BadRequest("the request body is not JSON")
        settings = new_game_settings(body)
        try:
            game = TableGame(**settings)
        except (ValueError, FileNotFoundError, ImportError) as error:  # e.g. ppo without the train extra
            raise BadRequest(f"cannot seat these agents: {error}") from None
        game_id = secrets.token_hex(8)
        with lock:
            games[game_id] = game
            while len(games) > MAX_GAMES:
                games.popitem(last=False)
        return jsonify({"id": game_id, **game.state(game.steps)}), 201

    @app.get("/api/games/<game_id>")
    def show(game_id):
        with lock:
            game = find(game_id)
            return jsonify({"id": game_id, **game.state([])})

    @app.post("/api/games/<game_id>/lead")
    def lead(game_id):
        body = request.get_json(force=True, silent=True)
        if not isinstance(body, dict) or set(body) != {"rank"} or not isinstance(body["rank"], str):
            raise BadRequest('the body must be a JSON object {"rank": "<A, 2..10, J, Q or K>"}')
        rank = body["rank"].strip().upper()
        if rank not in RANK_NAMES:
            raise BadRequest(f"rank got {body['rank']!r}; allowed: {' '.join(RANK_NAMES)}")
        with lock:
            game = find(game_id)
            steps = game.lead(rank)
            return jsonify({"id": game_id, **game.state(steps)})

    @app.get("/api/games/<game_id>/replay")
    def replay(game_id):
        with lock:
            game = find(game_id)
            return jsonify({"id": game_id, **game.state(game.steps)})

    @app.errorhandler(BadRequest)
    def refused(error: BadRequest):
        return jsonify({"error": str(error)}), error.status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):  # unknown paths, wrong methods: JSON too, not an HTML page
        return jsonify({"error": f"{error.code} {error.name}: {error.description}"}), error.code

    @app.errorhandler(Exception)
    def unexpected(error: Exception):  # a bug: say so plainly, keep the traceback in the server's log
        app.logger.exception("unexpected error")
        return jsonify({"error": f"internal error ({type(error).__name__}); the server log has the details"}), 500

    return app


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__)
    job.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    job.add_argument("--port", type=int, default=8000, help="port to listen on")
    return job


def main(argv=None) -> None:
    args = parser().parse_args(argv)
    print(f"open http://{args.host}:{args.port} in a browser (Ctrl-C stops the server)")
    create_app().run(host=args.host, port=args.port, debug=False, threaded=True)


if __name__ == "__main__":
    main()

"""A browser table: play Snip Snap Snorem against the agents on a page served on localhost.

    python -m train.serve                     # then open http://127.0.0.1:8000
    python -m train.serve --port 8080 --host 0.0.0.0
    python -m train.serve --agents my_agent.py:agent         # offer an agent of your own as an opponent

The page picks the table size, rules and opponents; you see your own hand and click a rank to lead; forced
plays and the agents' turns happen by themselves and are shown step by step, with the calls, penalties and
settlement; a finished deal can be replayed. Each browser's game is its own (a random game id); the server
checks every request and answers bad ones with a clear 4xx and a JSON ``{"error": ...}``, never a traceback.

JSON API: ``POST /api/games`` {players, rules, opponents, seat, seed} → a new game;
``GET /api/games/<id>``; ``POST /api/games/<id>/lead`` {rank: "7"}; ``GET /api/games/<id>/replay``.
"""

from __future__ import annotations

import argparse
import copy
import ipaddress
import json
import secrets
import socket
import threading
import time
from collections import OrderedDict
from pathlib import Path
from urllib.parse import urlsplit

import agents
import snipsnap_env
from snipsnap_env.cards import RANK_NAMES, card_name
from snipsnap_env.render import headline, open_set_events
from snipsnap_env.rules import MAX_PLAYERS, MIN_PLAYERS, PRESETS

from .runner.cli import new_parser, port, require
from .runner.job import Job, Plan, Refusal

PAGE = Path(__file__).with_name("web") / "table.html"
OPPONENTS = tuple(agents.names())  # every agent the registry makes (agents.scripted.SCRIPTED, the search, the learned)
MAX_GAMES = 500  # games held at once; with the agents shared between games, one game is ~130-150 kB (measured)
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})  # what a browser on this machine calls the server
IDLE_SECONDS = 30 * 60  # a game untouched this long may be closed to make room; a finished one at once
MAX_BODY_BYTES = 16 * 1024  # every request body of the API fits in far less
SHOWN = 60  # characters of a refused value echoed back in an error
CLIENT_TIMEOUT = 30  # seconds a connection may stay silent (mid-request or idle) before the server drops it
THREADS = 4  # requests handled at once (each is milliseconds of play under one lock)
MAX_CONNECTIONS = 500  # connections open at once (within the usual limit of 1024 open files); more wait


def shown(value) -> str:
    """``repr(value)``, cut to a few dozen characters: an error names the value, it does not echo a flood."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


class SharedAgents:
    """A learned agent's network loaded once per server and shared by every game (about 23 MB and seconds each
    when it was loaded per game), so memory grows with the kinds, not the games; each game's agent is a copy
    with the game's own generator (its tie-breaking draws), so the same seed deals and plays the same game
    whatever else the server plays. Calls happen under the server's lock."""

    def __init__(self):
        self._loaded: dict[str, agents.Policy] = {}

    def __call__(self, name: str, seed: int) -> agents.Policy:
        if name not in agents.learned():
            return agents.make(name, seed=seed)  # small: a generator and a few settings each
        if name not in self._loaded:
            self._loaded[name] = agents.make(name)
        policy = copy.copy(self._loaded[name])  # the network shared, read only
        policy.reseed(seed)
        return policy


class BadRequest(ValueError):
    """A request the server refuses: ``status`` and a message that names the problem."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class TableGame:
    """One deal between a person in ``seat`` and agents in the other seats."""

    def __init__(self, players: int, rules: str, opponents: list[str], seat: int, seed: int, make_agent=None):
        self.players, self.rules, self.opponents, self.seat = players, rules, opponents, seat
        self.env = snipsnap_env.raw_env(num_players=players, rules=rules, viewer=seat)
        self.env.reset(seed=seed)
        make_agent = make_agent or (lambda name, seed: agents.make(name, seed=seed))
        others = [s for s in range(players) if s != seat]
        self.policies = {s: make_agent(opponents[i % len(opponents)], seed + 1 + i) for i, s in enumerate(others)}
        self.touched = time.monotonic()
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
        "tone": event.kind.tone.value,
        "seat": event.seat,
        "card": None if event.card is None else card_name(event.card),
        "call": event.call,
    }


AGENTS_SLOT = "<!-- agents: the server writes agents.names() here -->"
PRESET_SLOT = "<!-- presets: the server writes one option per rules preset here, from snipsnap_env.rules.PRESETS -->"


def page_html(offered=OPPONENTS) -> str:
    """The table's page, its rules list filled from ``PRESETS`` (declared once, in snipsnap_env.rules) and its
    agents from the registry (``agents.names()``) and the agents of your own the server was started with."""
    options = "".join(f"<option>{name}</option>" for name in PRESETS)
    return PAGE.read_text().replace(PRESET_SLOT, options).replace(AGENTS_SLOT, ", ".join(offered))


def new_game_settings(body, offered=OPPONENTS) -> dict:
    """The settings of ``POST /api/games``, checked: every problem named."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    unknown = sorted(set(body) - {"players", "rules", "opponents", "seat", "seed"})
    if unknown:
        raise BadRequest(f"unknown settings {shown(unknown)}; known: players, rules, opponents, seat, seed")
    players = body.get("players", 4)
    if type(players) is not int or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise BadRequest(f"players got {shown(players)}; allowed: a whole number from {MIN_PLAYERS} to {MAX_PLAYERS}")
    rules = body.get("rules", "scarne")
    if not isinstance(rules, str) or rules not in PRESETS:
        raise BadRequest(f"rules got {shown(rules)}; allowed: {', '.join(sorted(PRESETS))}")
    opponents = body.get("opponents", ["most_copies"])
    if (
        not isinstance(opponents, list)
        or not 1 <= len(opponents) <= MAX_PLAYERS
        or not all(isinstance(o, str) and o in offered for o in opponents)
    ):
        raise BadRequest(f"opponents got {shown(opponents)}; allowed: a list of 1 to 8 of {', '.join(offered)}")
    seat = body.get("seat", 0)
    if type(seat) is not int or not 0 <= seat < players:
        raise BadRequest(f"seat got {shown(seat)}; allowed: a seat from 0 to {players - 1}")
    seed = body.get("seed", secrets.randbelow(2**31))
    if type(seed) is not int or not 0 <= seed < 2**63:
        raise BadRequest(f"seed got {shown(seed)}; allowed: a whole number from 0 to 2**63 - 1")
    return {"players": players, "rules": rules, "opponents": opponents, "seat": seat, "seed": seed}


def bound_address(host: str) -> str:
    """The address ``host`` (the server's --host: a name, or an address in any form the system reads, such as
    ``127.1`` or ``2130706433``) binds to, in its standard form; a ValueError naming it if it is none."""
    try:
        found = socket.getaddrinfo(host.strip("[]"), None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as error:
        raise ValueError(f"--host {shown(host)} is no address of this machine ({error})") from None
    return str(ipaddress.ip_address(found[0][4][0].split("%")[0]))


def is_loopback(host: str) -> bool:
    """Whether ``host`` (the server's --host, in any form) binds to this machine's loopback."""
    try:
        address = ipaddress.ip_address(bound_address(host))
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 is loopback, and Python 3.11 says it is not
    return address.is_loopback or bool(mapped and mapped.is_loopback)


def host_allowed(header: str, port: int | None, address: str = "127.0.0.1") -> bool:
    """Whether a request's ``Host`` header names this machine's loopback or the loopback ``address`` served
    (and ``port``, once known). A page from another site that rebinds its own name to 127.0.0.1 still sends its
    own name here: it is refused."""
    try:
        parts = urlsplit("//" + header)
        named = parts.hostname in LOOPBACK_NAMES or _same_address(parts.hostname, address)
        return named and (port is None or parts.port == port)
    except ValueError:  # a port that is no number
        return False


def _same_address(name: str | None, address: str) -> bool:
    """Whether ``name`` spells ``address`` (``[::ffff:127.0.0.1]`` and ``::ffff:7f00:1`` are one address)."""
    try:
        return name is not None and ipaddress.ip_address(name) == ipaddress.ip_address(address)
    except ValueError:
        return False


def create_app(host: str = "127.0.0.1", own_agents=()):
    """The Flask app (Flask comes with the ``web`` extra; only the server needs it). Served on a loopback
    ``host``, it answers only requests addressed to a loopback name (and to its port, once ``app.config["PORT"]``
    says it); on any other address the person chose to serve the network, and every Host is answered.
    ``own_agents``: specs of agents of your own (agents.spec), offered beside the registry's."""
    from flask import Flask, jsonify, request
    from werkzeug.exceptions import HTTPException

    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.config["CHECK_HOST"], app.config["PORT"] = is_loopback(host), None
    app.config["ADDRESS"] = bound_address(host) if app.config["CHECK_HOST"] else None

    @app.before_request
    def addressed_to_this_machine():
        if app.config["CHECK_HOST"] and not host_allowed(
            request.host, app.config["PORT"], app.config["ADDRESS"]
        ):
            raise BadRequest(
                f"requests for the host {shown(request.host)} are refused: this table answers on "
                "127.0.0.1 and localhost only",
                403,
            )

    games: OrderedDict[str, TableGame] = OrderedDict()  # least recently touched first
    lock = threading.Lock()
    make_agent = SharedAgents()
    offered = (*OPPONENTS, *own_agents)
    app.config["games"] = games  # (tests read the engine's side of a game here)

    def find(game_id: str) -> TableGame:
        game = games.get(game_id)
        if game is None:
            raise BadRequest(
                f"no game {shown(game_id)}: it never existed, the server restarted, or it was closed to make room "
                f"(finished games first, then games idle for {IDLE_SECONDS // 60} minutes); start a new one",
                404,
            )
        games.move_to_end(game_id)
        game.touched = time.monotonic()
        return game

    def make_room() -> None:
        """Close finished games, then games idle for IDLE_SECONDS, while the server holds MAX_GAMES; refuse
        when every game is in play (a burst of new games never evicts someone's game in progress)."""
        if len(games) < MAX_GAMES:
            return
        now = time.monotonic()
        finished = [key for key, game in games.items() if game.match.over]
        idle = [key for key, game in games.items() if not game.match.over and now - game.touched >= IDLE_SECONDS]
        for game_id in (finished + idle)[: len(games) - MAX_GAMES + 1]:  # each kind least recently touched first
            del games[game_id]
        if len(games) >= MAX_GAMES:
            raise BadRequest(f"the server holds {len(games)} games in play, its limit; try again later", 503)

    def json_body():
        """The request's JSON body: only ``application/json`` (a plain form or text post from another page
        cannot send that without the browser asking first), and only from this page's own origin."""
        origin = request.headers.get("Origin")
        if request.headers.get("Sec-Fetch-Site") == "cross-site" or (
            origin is not None and origin.rstrip("/") != request.host_url.rstrip("/")
        ):
            raise BadRequest("requests from other sites are refused", 403)
        if request.mimetype != "application/json":
            raise BadRequest(f"the body must be Content-Type: application/json, got {shown(request.mimetype)}", 415)
        if not request.get_data():
            return None
        try:
            return json.loads(request.get_data())
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            raise BadRequest("the request body is not JSON") from None

    @app.get("/")
    def page():
        return page_html(offered), 200, {"Content-Type": "text/html; charset=utf-8"}

    @app.post("/api/games")
    def new_game():
        settings = new_game_settings(json_body(), offered)
        try:
            game = TableGame(**settings, make_agent=make_agent)
        except (ValueError, FileNotFoundError, ImportError) as error:  # e.g. ppo without the train extra
            raise BadRequest(f"cannot seat these agents: {error}") from None
        game_id = secrets.token_hex(8)
        with lock:
            make_room()
            games[game_id] = game
        return jsonify({"id": game_id, **game.state(game.steps)}), 201

    @app.get("/api/games/<game_id>")
    def show(game_id):
        with lock:
            game = find(game_id)
            return jsonify({"id": game_id, **game.state([])})

    @app.post("/api/games/<game_id>/lead")
    def lead(game_id):
        body = json_body()
        if not isinstance(body, dict) or set(body) != {"rank"} or not isinstance(body["rank"], str):
            raise BadRequest('the body must be a JSON object {"rank": "<A, 2..10, J, Q or K>"}')
        rank = body["rank"].strip().upper()
        if rank not in RANK_NAMES:
            raise BadRequest(f"rank got {shown(body['rank'])}; allowed: {' '.join(RANK_NAMES)}")
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
    def http_error(error: HTTPException):  # unknown paths, wrong methods, bodies too large: JSON too
        return jsonify({"error": f"{error.code} {error.name}: {error.description}"}), error.code

    @app.errorhandler(Exception)
    def unexpected(error: Exception):  # a bug: say so plainly, keep the traceback in the server's log
        app.logger.exception("unexpected error")
        return jsonify({"error": f"internal error ({type(error).__name__}); the server log has the details"}), 500

    return app


def parser() -> argparse.ArgumentParser:
    """The job's flags (its --help shows the module docstring and its examples)."""
    job = new_parser(__doc__, __name__)
    job.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)")
    job.add_argument("--port", type=port, default=8000, help="port to listen on (0: any free port)")
    job.add_argument(
        "--agents", nargs="+", default=[], metavar="SPEC",
        help="agents of your own to offer as opponents: package.module:attr or path/to/file.py:attr",
    )  # fmt: skip
    return job


def check(args) -> Plan:
    """Flask and waitress there; the address read and the port taken here (a taken port or a foreign address is
    a refusal, not a server that fails to start)."""
    require("web", "flask", "waitress")
    from waitress import create_server

    for spec in args.agents:  # made once here: a bad spec is refused before the port is taken
        if not agents.is_spec(spec):
            raise Refusal(f"--agents {spec!r}: an agent of your own is package.module:attr or path/to/file.py:attr")
        agents.make(spec, seed=0)

    address = bound_address(args.host)
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((address, args.port))
        listening.listen(128)
    except OSError as error:  # the port is taken, or the address is not this machine's
        listening.close()
        raise Refusal(f"cannot listen on {args.host}:{args.port}: {error.strerror or error}") from None

    def work(_) -> None:
        app = create_app(args.host, tuple(args.agents))
        # waitress reads each request without a thread (a client that sends half a request holds no thread) and
        # drops a connection idle for CLIENT_TIMEOUT; its few threads only run whole requests
        server = create_server(app, sockets=[listening], threads=THREADS, channel_timeout=CLIENT_TIMEOUT,
                               cleanup_interval=max(1, CLIENT_TIMEOUT // 3), connection_limit=MAX_CONNECTIONS,
                               ident="snipsnap")  # fmt: skip
        app.config["PORT"] = listening.getsockname()[1]
        host = f"[{address}]" if ":" in address else address
        print(f"open http://{host}:{app.config['PORT']} in a browser (Ctrl-C stops the server)", flush=True)
        try:
            server.run()
        finally:
            server.close()

    return Plan(work, close=listening.close, kept="the server has stopped (its games live in memory only)")


# --agents is checked in check() (specs only: code the person names, no model files, so no --trust-model)
JOB = Job(parser, check, example=("--port", "0"))  # it serves until Ctrl-C or SIGTERM
main = JOB.main


if __name__ == "__main__":
    main()

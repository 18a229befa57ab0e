"""The browser table's server: games follow the engine, each browser's game is its own, and every bad
request gets a clear 4xx in JSON."""

from __future__ import annotations

import importlib.util

import pytest

# a mark, not a module-level skip: a run that selects none of these tests (the RLlib venv's) reports no skip
pytestmark = pytest.mark.skipif(importlib.util.find_spec("flask") is None, reason="flask is not installed (web extra)")


def create_app(*args):
    from train.serve import create_app

    return create_app(*args)


@pytest.fixture
def client():
    return create_app().test_client()


def new_game(client, **settings):
    response = client.post("/api/games", json={"players": 3, "opponents": ["random"], "seed": 1, **settings})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_a_game_runs_to_its_end_through_the_person_s_leads(client):
    state = new_game(client)
    game_id, steps = state["id"], list(state["steps"])
    while state["legal"]:
        assert state["table"]["headline"] == "your lead"
        state = client.post(f"/api/games/{game_id}/lead", json={"rank": state["legal"][-1]}).get_json()
        steps += state["steps"]
    assert state["table"]["over"] and not state["legal"]
    replay = client.get(f"/api/games/{game_id}/replay").get_json()
    assert replay["steps"] == steps  # the whole deal, step by step, as it was shown
    events = [event["text"] for step in steps for event in step["events"]]
    assert events[0].endswith("deals") and "wins the deal" in " ".join(events)
    assert sum(state["table"]["scores"]) == 300


def test_each_browser_has_its_own_game(client):
    first, second = new_game(client, seed=1), new_game(client, seed=2)
    assert first["id"] != second["id"]
    client.post(f"/api/games/{first['id']}/lead", json={"rank": first["legal"][0]})
    assert client.get(f"/api/games/{second['id']}").get_json()["table"] == second["table"]


@pytest.mark.parametrize(
    "body, status, words",
    [
        ("not json", 400, "the request body is not JSON"),
        ("[" * 10_000, 400, "the request body is not JSON"),  # nested too deep to read: not a 500
        ({"rules": ["scarne"]}, 400, "rules got ['scarne']"),
        ([1, 2], 400, "must be a JSON object"),
        ({"players": 9}, 400, "players got 9; allowed: a whole number from 3 to 8"),
        ({"players": True}, 400, "players got True"),
        ({"rules": "snap"}, 400, "rules got 'snap'"),
        ({"opponents": "random"}, 400, "opponents got 'random'"),
        ({"opponents": ["god"]}, 400, "opponents got ['god']"),
        ({"opponents": []}, 400, "opponents got []"),
        ({"seat": 4, "players": 4}, 400, "seat got 4; allowed: a seat from 0 to 3"),
        ({"seed": -1}, 400, "seed got -1"),
        ({"colour": "red"}, 400, "unknown settings ['colour']"),
    ],
)
def test_bad_new_game_requests_are_refused_in_words(client, body, status, words):
    if isinstance(body, str):
        response = client.post("/api/games", data=body, content_type="application/json")
    else:
        response = client.post("/api/games", json=body)
    assert response.status_code == status
    assert words in response.get_json()["error"]


def test_bad_leads_and_unknown_games_are_refused_in_words(client):
    state = new_game(client)
    game_id, legal = state["id"], state["legal"]
    illegal = next(
        rank for rank in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K") if rank not in legal
    )
    cases = [
        (f"/api/games/{game_id}/lead", {"rank": illegal}, 422, f"'{illegal}' is not a rank you can lead"),
        (f"/api/games/{game_id}/lead", {"rank": "Z"}, 400, "rank got 'Z'"),
        (f"/api/games/{game_id}/lead", {"rank": 7}, 400, 'the body must be a JSON object {"rank"'),
        (f"/api/games/{game_id}/lead", {}, 400, 'the body must be a JSON object {"rank"'),
        ("/api/games/0123abcd/lead", {"rank": "A"}, 404, "no game '0123abcd'"),
    ]
    for path, body, status, words in cases:
        response = client.post(path, json=body)
        assert (response.status_code, words in response.get_json()["error"]) == (status, True), path
    while state["legal"]:
        state = client.post(f"/api/games/{game_id}/lead", json={"rank": state["legal"][0]}).get_json()
    response = client.post(f"/api/games/{game_id}/lead", json={"rank": "A"})
    assert response.status_code == 409 and "it is not your lead" in response.get_json()["error"]
    assert client.get("/api/nothing").status_code == 404 and "error" in client.get("/api/nothing").get_json()
    assert client.delete("/api/games").status_code == 405


def test_the_page_is_served_with_every_preset_in_order(client):
    import re

    from snipsnap_env.rules import PRESETS

    page = client.get("/")
    assert page.status_code == 200 and b"<title>Snip Snap Snorem</title>" in page.data
    rules = page.data.decode().split('<select id="rules">')[1].split("</select>")[0]
    assert re.findall(r"<option>(\w+)</option>", rules) == list(PRESETS)


def test_only_json_from_the_page_s_own_origin_is_accepted(client):
    plain = client.post("/api/games", data='{"players": 3}', content_type="text/plain")
    assert plain.status_code == 415 and "application/json" in plain.get_json()["error"]
    form = client.post("/api/games", data={"players": "3"})
    assert form.status_code == 415
    other_site = client.post("/api/games", json={"players": 3}, headers={"Origin": "https://evil.example"})
    assert other_site.status_code == 403 and "other sites" in other_site.get_json()["error"]
    fetch_metadata = client.post("/api/games", json={"players": 3}, headers={"Sec-Fetch-Site": "cross-site"})
    assert fetch_metadata.status_code == 403
    same_origin = client.post("/api/games", json={"players": 3}, headers={"Origin": "http://localhost"})
    assert same_origin.status_code == 201


def test_large_bodies_are_refused_and_errors_never_echo_a_flood(client):
    huge = client.post("/api/games", data="[" * 100_000, content_type="application/json")
    assert huge.status_code == 413 and "error" in huge.get_json()
    long_value = client.post("/api/games", json={"rules": "x" * 10_000})
    assert long_value.status_code == 400 and len(long_value.get_json()["error"]) < 300


def test_a_full_server_closes_finished_then_idle_games_and_never_one_in_play(monkeypatch):
    from train import serve

    monkeypatch.setattr(serve, "MAX_GAMES", 2)
    client = create_app().test_client()
    first, second = new_game(client, seed=1), new_game(client, seed=2)
    busy = client.post("/api/games", json={"players": 3, "seed": 3})
    assert busy.status_code == 503 and "try again later" in busy.get_json()["error"]
    state = first
    while state["legal"]:  # the first game ends: it is the one closed to make room
        state = client.post(f"/api/games/{first['id']}/lead", json={"rank": state["legal"][0]}).get_json()
    third = new_game(client, seed=3)
    assert client.get(f"/api/games/{second['id']}").status_code == 200
    gone = client.get(f"/api/games/{first['id']}")
    assert gone.status_code == 404 and "closed to make room" in gone.get_json()["error"]
    monkeypatch.setattr(serve, "IDLE_SECONDS", 0)  # now every game counts as idle: the least recently touched goes
    new_game(client, seed=4)  # (the second game was looked at after the third was made)
    assert client.get(f"/api/games/{third['id']}").status_code == 404
    assert client.get(f"/api/games/{second['id']}").status_code == 200


def test_games_share_one_loaded_model_per_agent_kind(client):
    first, second = new_game(client, opponents=["ppo"]), new_game(client, opponents=["ppo"], seed=5)
    games = client.application.config["games"]
    one, other = games[first["id"]].policies[1], games[second["id"]].policies[1]
    assert one is not other and one._actor is other._actor  # each game its own draws, one network


def _played(client, seed: int, opponents: list[str]) -> list[str]:
    """Every event of a game the person plays through, always leading their lowest legal rank."""
    state = new_game(client, players=4, seed=seed, opponents=opponents)
    steps = list(state["steps"])
    while state["legal"]:
        state = client.post(f"/api/games/{state['id']}/lead", json={"rank": state["legal"][0]}).get_json()
        steps += state["steps"]
    return [event["text"] for step in steps for event in step["events"]]


def test_the_same_seed_plays_the_same_game_whatever_other_games_play(client):
    """Each game's agents draw from its own generators: games of one seed, started between other games with
    the same learned agents, are the same game."""
    opponents = ["ppo", "ppo_scratch", "random"]
    games = []
    for other_seed in range(4):
        games.append(_played(client, 7, opponents))
        _played(client, other_seed, opponents)  # another game moves the shared agents' state, if they had any
    assert all(game == games[0] for game in games)
    assert _played(create_app().test_client(), 7, opponents) == games[0]  # and in a fresh server


def test_the_page_offers_every_agent_the_registry_makes(client):
    import agents

    page = client.get("/").get_data(as_text=True)
    assert "agents: the server writes" not in page
    assert f"agents seated in turn: {', '.join(agents.names())}" in page


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_bad_port_is_a_usage_error(port, capsys):
    from train import serve

    with pytest.raises(SystemExit) as exit_:
        serve.parser().parse_args(["--port", port])
    assert exit_.value.code == 2 and "--port" in capsys.readouterr().err


def test_the_server_prints_the_address_it_really_listens_on():
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    server = subprocess.Popen(
        [sys.executable, "-m", "train.serve", "--port", "0"],
        cwd=Path(__file__).resolve().parent.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        address = line.split()[1]
        assert not address.endswith(":0"), line
        with urllib.request.urlopen(address, timeout=30) as page:
            assert page.status == 200
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_page_that_rebinds_its_own_name_to_this_machine_is_refused():
    app = create_app("127.0.0.1")
    app.config["PORT"] = 8000
    client = app.test_client()
    body = {"players": 3, "opponents": ["random"], "seed": 1}
    for host in ("evil.example:8000", "127.0.0.1.evil.example:8000", "127.0.0.1:9999", "localhost:x"):
        headers = {"Host": host, "Origin": f"http://{host}"}
        response = client.post("/api/games", json=body, headers=headers)
        assert response.status_code == 403 and "refused" in response.get_json()["error"], host
        assert client.get("/", headers={"Host": host}).status_code == 403
    for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000"):
        response = client.post("/api/games", json=body, headers={"Host": host, "Origin": f"http://{host}"})
        assert response.status_code == 201, host
    open_to_the_network = create_app("0.0.0.0").test_client()  # the person chose to serve every interface
    assert open_to_the_network.get("/", headers={"Host": "my-laptop.lan:8000"}).status_code == 200


@pytest.mark.parametrize("host", ["LOCALHOST", "127.1", "2130706433", "127.0.0.1"])
def test_every_spelling_of_loopback_binds_loopback_and_keeps_the_host_check(host):
    from train.serve import bound_address

    assert bound_address(host) == "127.0.0.1"
    app = create_app(host)
    app.config["PORT"] = 8000
    client = app.test_client()
    assert client.get("/", headers={"Host": "evil.example:8000"}).status_code == 403  # a rebinding page
    assert client.get("/", headers={"Host": "127.0.0.1:8000"}).status_code == 200


def test_an_ipv4_mapped_loopback_keeps_the_host_check():
    """``::ffff:127.0.0.1`` listens on loopback; Python 3.11's ``is_loopback`` says it does not (a foreign Host
    header was answered with 200)."""
    app = create_app("::ffff:127.0.0.1")
    app.config["PORT"] = 8000
    client = app.test_client()
    assert client.get("/", headers={"Host": "evil.example:8000"}).status_code == 403
    assert client.get("/", headers={"Host": "[::ffff:127.0.0.1]:8000"}).status_code == 200
    assert client.get("/", headers={"Host": "localhost:8000"}).status_code == 200


def test_a_loopback_address_other_than_127_0_0_1_answers_its_own_name():
    app = create_app("127.0.0.2")
    app.config["PORT"] = 8000
    client = app.test_client()
    assert client.get("/", headers={"Host": "127.0.0.2:8000"}).status_code == 200
    assert client.get("/", headers={"Host": "evil.example:8000"}).status_code == 403


def test_a_taken_port_or_a_foreign_address_is_one_line_and_exit_2(capsys):
    import socket

    from train import serve

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        for argv, words in [
            (["--port", str(taken.getsockname()[1])], "cannot listen on"),
            (["--host", "192.0.2.1", "--port", "0"], "cannot listen on"),  # TEST-NET: no address of this machine
        ]:
            with pytest.raises(SystemExit) as refused:
                serve.main(argv)
            err = capsys.readouterr().err
            assert refused.value.code == 2 and words in err and len(err.strip().splitlines()) == 1, err
    finally:
        taken.close()


@pytest.mark.slow
def test_clients_that_stall_hold_no_thread_and_are_dropped_after_the_timeout():
    """200 connections that send half a request: the server answers a whole request at once all the same, runs on
    a handful of threads (it held a thread per stalled client before) and closes the stalled ones once they have
    been silent for its timeout."""
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    from train.serve import CLIENT_TIMEOUT

    root = Path(__file__).resolve().parent.parent
    server = subprocess.Popen([sys.executable, "-m", "train.serve", "--port", "0"], cwd=root, stdout=subprocess.PIPE,
                              text=True)  # fmt: skip
    stalled = []
    try:
        address = server.stdout.readline().split()[1]
        host, port = address.removeprefix("http://").rsplit(":", 1)
        for _ in range(200):
            client = socket.create_connection((host, int(port)), timeout=5)
            client.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
            stalled.append(client)
        started = time.monotonic()
        with urllib.request.urlopen(address, timeout=30) as page:
            assert page.status == 200
        assert time.monotonic() - started < 10
        threads = int(next(line for line in Path(f"/proc/{server.pid}/status").read_text().splitlines()
                           if line.startswith("Threads:")).split()[1])  # fmt: skip
        assert threads < 20, threads
        deadline = time.monotonic() + CLIENT_TIMEOUT + 30
        for client in stalled:  # read to the end: an error answer, if any, then the server's close
            client.settimeout(max(0.1, deadline - time.monotonic()))
            while client.recv(4096):
                pass
    finally:
        for client in stalled:
            client.close()
        server.terminate()
        server.wait(timeout=30)


def test_docs_play_describes_every_route_and_every_field_of_the_json_api(client):
    """docs/play.md's JSON API section names every route of the app and every key a game's state holds."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "play.md").read_text()
    section = page[page.index("### The browser table's JSON API") :]
    app = create_app()
    rules = [rule.rule for rule in app.url_map.iter_rules() if rule.rule.startswith("/api")]
    routes = {re.sub(r"<[^>]+>", "<id>", rule) for rule in rules}
    for route in routes:
        assert f"{route}`" in section, route
    state = new_game(client)
    step_event = state["steps"][0]["events"][0]
    for key in [*state, *state["table"], *state["steps"][0], *step_event]:
        assert f"`{key}`" in section, key


def test_an_agent_of_your_own_is_offered_and_seated(tmp_path):
    (tmp_path / "mine.py").write_text("def agent(observation):\n    return int(observation['action_mask'].argmax())\n")
    spec = f"{tmp_path}/mine.py:agent"
    client = create_app("127.0.0.1", (spec,)).test_client()
    assert spec in client.get("/").get_data(as_text=True)
    state = client.post("/api/games", json={"players": 3, "opponents": [spec], "seed": 2}).get_json()
    assert state["opponents"] == [spec] and state["steps"], state
    refused = create_app().test_client().post("/api/games", json={"players": 3, "opponents": [spec]})
    assert refused.status_code == 400  # only a server started with --agents offers it

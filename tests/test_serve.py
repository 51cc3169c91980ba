"""The tables served (issue 41, item 5): one table-session interface, as an HTTP API and as an MCP tool server; whole
games of every env through both, isolated sessions, one-line refusals, and a seat's payload that does not move across
worlds the seat cannot tell apart."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from parlour.envs import ENVIRONMENTS, replay  # noqa: E402
from parlour.training.serve.api import app  # noqa: E402
from parlour.training.serve.mcp_server import server  # noqa: E402
from parlour.training.tables import Tables, record_frames, seat_payload  # noqa: E402

ENVS = sorted(ENVIRONMENTS)


@pytest.fixture
def api() -> tuple[TestClient, Tables]:
    tables = Tables()
    return TestClient(app(tables)), tables


@pytest.mark.parametrize("name", ENVS)
def test_a_whole_game_through_the_http_api_at_every_env(name: str, api: tuple[TestClient, Tables]) -> None:
    client, tables = api
    r = client.post("/api/tables", json={"env": name, "seat": 1, "seed": 5})
    assert r.status_code == 200, r.text
    table = r.json()
    key, seat = table["table"], table["seat"]
    assert seat == "player_1" and len(key) >= 20
    rng = np.random.default_rng(0)
    moves = 0
    while not table["over"]:
        assert table["your_turn"] and table["to_act"] == seat and table["legal"]
        assert "Your legal actions:" in table["prompt"] and table["view"] in table["prompt"]
        pick = int(rng.integers(len(table["legal"])))
        action: Any = pick + 1 if rng.random() < 0.5 else table["legal"][pick].upper()
        r = client.post(f"/api/tables/{key}/act", json={"action": str(action)})
        assert r.status_code == 200, r.text
        table = r.json()
        moves += 1
    assert table["legal"] == [] and table["outcome"]["truncated"] in (False, True)
    record = client.get(f"/api/tables/{key}/record").json()
    assert replay(record).final_outcome == table["outcome"]
    assert record["players"][1] == "caller" and record["human_seat"] == 1
    # the others are the game's heuristic by default: never only random
    game = name.rsplit("_v", 1)[0]
    assert all(p == f"{game}_heuristic" for i, p in enumerate(record["players"]) if i != 1)
    assert sum(m["seat"] == 1 for m in record["actions"]) == moves
    frames = client.post("/api/frames", json=record).json()
    assert frames == json.loads(json.dumps(record_frames(record)))
    assert [f["move"]["name"] for f in frames["frames"][:-1]] == [m["text"] for m in record["actions"]]
    assert client.delete(f"/api/tables/{key}").json() == {"closed": key} and len(tables) == 0


#: (request, the start of the one-line refusal)
BAD_TABLES: list[tuple[Any, str]] = [
    ({"env": "chess_v0"}, "env 'chess_v0' is not a Parlour environment; available: ["),
    ({"env": "six_suspects_v0", "colour": "red"}, "unknown key(s) ['colour']; a new table takes ['env', "),
    ({"env": "six_suspects_v0", "seat": 4}, "seat 4 is not a seat of a 4-player table: expected 0..3"),
    ({"env": "six_suspects_v0", "seat": "1"}, "seat must be a whole number, not '1'"),
    ({"env": "six_suspects_v0", "seed": -1}, "seed -1 is out of range"),
    ({"env": "six_suspects_v0", "num_players": 1}, "six_suspects: num_players=1 is out of range"),
    ({"env": "six_suspects_v0", "opponents": ["grandmaster"]}, "opponent 'grandmaster': unknown policy"),
    ({"env": "six_suspects_v0", "opponents": []}, "opponents must be a list of policy names; available for"),
    ([1, 2], "a new table is an object with the keys"),
]


@pytest.mark.parametrize(("request_", "message"), BAD_TABLES)
def test_a_bad_new_table_is_refused_in_one_line(request_: Any, message: str, api: tuple[TestClient, Tables]) -> None:
    client, tables = api
    r = client.post("/api/tables", json=request_)
    assert r.status_code == 400
    error = r.json()["error"]
    assert error.startswith(message), error
    assert "\n" not in error and len(tables) == 0


def test_bad_moves_and_unknown_tables_are_refused_and_change_nothing(api: tuple[TestClient, Tables]) -> None:
    client, _ = api
    table = client.post("/api/tables", json={"env": "lady_alice_v2", "seed": 1}).json()
    key = table["table"]
    for body, message in [
        ({"action": "dance"}, "'dance' is neither a legal action's name nor its number in the list; legal actions: "),
        ({"action": "99"}, "99 is not a number in the list"),
        ({"move": "1"}, 'a move is {"action": NAME or its number in the legal list}'),
        ("1", 'a move is {"action": NAME or its number in the legal list}'),
    ]:
        r = client.post(f"/api/tables/{key}/act", json=body)
        assert r.status_code == 400 and r.json()["error"].startswith(message), r.text
    r = client.post(f"/api/tables/{key}/act", content=b"{not json")
    assert r.status_code == 400 and r.json() == {"error": "the request body is not JSON"}
    assert client.get(f"/api/tables/{key}").json() == {k: v for k, v in table.items() if k != "table"}
    r = client.get(f"/api/tables/{key}/record")
    assert r.status_code == 409 and "once the game is over" in r.json()["error"]
    for path in ("/api/tables/nope", "/api/tables/nope/record"):
        assert client.get(path).status_code == 404
    assert client.post("/api/tables/nope/act", json={"action": "1"}).status_code == 404


def test_tables_are_isolated_and_the_least_recently_used_goes_first() -> None:
    tables = Tables(limit=2)
    client = TestClient(app(tables))
    a = client.post("/api/tables", json={"env": "six_suspects_v0", "seed": 1}).json()
    b = client.post("/api/tables", json={"env": "six_suspects_v0", "seed": 1}).json()
    assert a["table"] != b["table"] and a["view"] == b["view"]
    after = client.post(f"/api/tables/{a['table']}/act", json={"action": "1"}).json()
    assert client.get(f"/api/tables/{b['table']}").json()["view"] == b["view"] != after["view"]
    client.get(f"/api/tables/{a['table']}")  # a is now the most recently used
    client.post("/api/tables", json={"env": "six_suspects_v0"})
    assert client.get(f"/api/tables/{b['table']}").status_code == 404
    assert client.get(f"/api/tables/{a['table']}").status_code == 200


@pytest.mark.parametrize("name", ENVS)
def test_a_seats_payload_is_the_same_in_every_world_it_cannot_tell_apart(name: str) -> None:
    """The audit on what the servers hand out: everything hidden from the seat redrawn, its payload is unchanged (while
    the game is on: at its end the game reveals what was hidden, to every seat)."""
    tables = Tables()
    rng = np.random.default_rng(3)
    checked = 0
    for seed in range(3):
        _, session = tables.new({"env": name, "seat": seed % 2, "seed": seed})
        while not session.env.game_over:
            env, agent = session.env, session.agent
            for _ in range(2):
                twin = env.resample_hidden(agent, rng)
                assert seat_payload(twin, agent) == seat_payload(env, agent), f"{name}: the payload moved"
                checked += 1
            legal = session.payload()["legal"]
            session.act(str(int(rng.integers(len(legal))) + 1))
    assert checked > 10


def test_a_game_through_the_mcp_tools_and_one_line_tool_errors() -> None:
    async def main() -> None:
        async with Client(server()) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert names == {"list_envs", "new_game", "view", "act", "record", "close"}
            envs = (await client.call_tool("list_envs", {})).structured_content
            assert set(envs) == set(ENVIRONMENTS) and "elevenses_heuristic" in envs["elevenses_v0"]["policies"]
            for name in ENVS:
                r = await client.call_tool("new_game", {"env": name, "seat": 2, "seed": 9})
                assert not r.is_error, r.content
                table = r.structured_content
                key = table["table"]
                while not table["over"]:
                    r = await client.call_tool("act", {"table": key, "action": table["legal"][0]})
                    assert not r.is_error, r.content
                    table = r.structured_content
                record = (await client.call_tool("record", {"table": key})).structured_content
                assert replay(record).final_outcome == table["outcome"]
                assert (await client.call_tool("close", {"table": key})).structured_content == {"closed": key}
            bad = await client.call_tool("new_game", {"env": "six_suspects_v0", "seat": 9})
            assert bad.is_error and "seat 9 is not a seat of a 4-player table" in bad.content[0].text
            gone = await client.call_tool("view", {"table": key})
            assert gone.is_error and "no table" in gone.content[0].text and "\n" not in gone.content[0].text

    asyncio.run(main())

"""Language agents as policies (issue 41): a ``prompt -> answer`` callable and the OpenAI-compatible client, against
a fake chat-completions server on loopback that the tests start and stop (no network, no model); whole games of every
env through ``parlour benchmark``'s harness, with tokens, latency, refused answers and forfeits counted per game and
every prompt and answer kept in the records."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from parlour.baselines import UnknownPolicyError, resolve  # noqa: E402
from parlour.baselines.language import LanguagePolicy, Reply, chat_client  # noqa: E402
from parlour.envs import ENVIRONMENTS, make, replay  # noqa: E402
from parlour.envs.text import AnswerPolicy  # noqa: E402
from parlour.training.evaluation.matchups import play_matchup  # noqa: E402

ENVS = sorted(ENVIRONMENTS)


def legal_names(prompt: str) -> list[str]:
    after = prompt.split("\nYour legal actions:\n", 1)[1]
    return [line.split(". ", 1)[1] for line in after.split("\n\n", 1)[0].splitlines()]


class FakeModel:
    """What the fake server answers: the first legal action by name (``mode="name"``), by number, or nonsense."""

    def __init__(self) -> None:
        self.mode = "name"
        self.requests: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> str:
        self.requests.append(body)
        prompt = body["messages"][-1]["content"]
        if self.mode == "nonsense":
            return "I would rather not say."
        if self.mode == "number":
            return "1"
        return f"Let me think.\n{legal_names(prompt)[-1]}"


@pytest.fixture
def server() -> Iterator[tuple[str, FakeModel]]:
    model = FakeModel()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 -- the http.server name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.path != "/v1/chat/completions":
                self.send_error(404)
                return
            text = model.answer(body)
            reply = {
                "id": "fake",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
                ],
                "usage": {"prompt_tokens": len(body["messages"][-1]["content"]) // 4, "completion_tokens": 5,
                          "total_tokens": 0},
            }  # fmt: skip
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", model
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("name", ENVS)
def test_the_chat_client_plays_whole_games_of_every_env_through_the_benchmark_harness(
    name: str, server: tuple[str, FakeModel], tmp_path: Path
) -> None:
    url, model = server
    agent = resolve(f"chat:fake-model@{url}?temperature=0.3&max_tokens=32", name, 4)
    assert isinstance(agent, LanguagePolicy) and agent.name == "chat:fake-model"
    m = play_matchup(name, agent, resolve("random", name), num_players=4, games=1, records=tmp_path)
    summary = m.summary()
    talk = summary["language_agent"]
    assert summary["games"] == 4 and talk["games"] == 4 and talk["invalid"] == 0 and talk["forfeits"] == 0
    assert talk["requests"] == sum(m.decisions) == len(model.requests)
    assert talk["completion_tokens"] == 5 * talk["requests"] and talk["prompt_tokens"] > 0
    assert all(r["model"] == "fake-model" and r["temperature"] == 0.3 and r["max_tokens"] == 32 for r in model.requests)
    for path in sorted(tmp_path.rglob("*.json")):
        record = json.loads(path.read_text())
        replay(record)  # the game replays from its record alone
        mine = [e for e in record["exchanges"]]
        assert mine and all(e["prompt"].startswith("You are player_") and "action" in e for e in mine)
        seat_moves = [a["action"] for a in record["actions"] if a["agent"] == mine[0]["agent"]]
        assert [e["action"] for e in mine] == seat_moves
        assert record["agents"][mine[0]["agent"]]["requests"] == len(mine)


def test_a_model_that_cannot_answer_is_reprompted_once_then_forfeits(server: tuple[str, FakeModel]) -> None:
    url, model = server
    model.mode = "nonsense"
    agent = resolve(f"chat:fake@{url}", "six_suspects_v0", 4)
    m = play_matchup("six_suspects_v0", agent, resolve("random", "six_suspects_v0"), num_players=4, games=1)
    talk = m.summary()["language_agent"]
    assert talk["forfeits"] == 4 and talk["invalid"] == 8 and talk["requests"] == 8  # 2 tries a game, 4 games
    assert not any(m.wins) and all(r == -1.0 for r in m.rewards)
    second = model.requests[1]["messages"][-1]["content"]
    assert "Your previous answer was not accepted: 'i would rather not say.' is neither" in second


def test_a_function_of_your_own_is_a_text_agent_and_a_random_fallback_keeps_the_game_going(tmp_path: Path) -> None:
    module = tmp_path / "my_agent.py"
    module.write_text("def ask(prompt):\n    return 'no idea'\n\ndef two(a, b):\n    return ''\n")
    agent = resolve(f"text:{module}:ask", "lady_alice_v2", 4)
    assert isinstance(agent, LanguagePolicy)
    agent.answers = AnswerPolicy(retries=0, on_invalid="random")
    m = play_matchup("lady_alice_v2", agent, resolve("random", "lady_alice_v2"), num_players=4, games=1)
    talk = m.summary()["language_agent"]
    assert talk["forfeits"] == 0 and talk["invalid"] == talk["requests"] == sum(m.decisions)
    assert talk["prompt_tokens"] is None  # a plain function reports no tokens
    with pytest.raises(UnknownPolicyError, match="cannot be called with one prompt"):
        resolve(f"text:{module}:two", "lady_alice_v2", 4)
    with pytest.raises(UnknownPolicyError, match="has no attribute 'nope'"):
        resolve(f"text:{module}:nope", "lady_alice_v2", 4)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("chat:model", "expected chat:MODEL@BASE_URL"),
        ("chat:@http://x/v1", "expected chat:MODEL@BASE_URL"),
        ("chat:m@ftp://x/v1", "is not an http(s) URL"),
        (
            "chat:m@http://x/v1?temp=1",
            "unknown setting 'temp'; allowed: ['max_tokens', 'probe_every', 'retries', 'temperature', ",
        ),
        ("chat:m@http://x/v1?max_tokens=many", "max_tokens='many' is not a int"),
        ("chat:m@http://x/v1?temperature=9", "temperature=9.0 is not valid: expected a number in [0, 2]"),
        ("chat:m@http://x/v1?retries=-1", "retries=-1 is not valid"),
        ("text:nothing here", "is neither text:module:NAME nor text:path/to/file.py:NAME"),
    ],
)
def test_a_malformed_language_agent_spec_is_refused_in_one_line(spec: str, message: str) -> None:
    with pytest.raises(UnknownPolicyError) as info:
        resolve(spec, "six_suspects_v0", 4)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_chat_client_copies_without_its_connection_and_a_reply_may_be_plain_text() -> None:
    import pickle

    client = chat_client("chat:m@http://127.0.0.1:9/v1?timeout=2")
    client._client = object()  # stands for the SDK's client and its connections
    copy = pickle.loads(pickle.dumps(client))
    assert copy == client and copy._client is None and copy.timeout == 2.0
    env = make("six_suspects_v0")
    env.reset(seed=0)
    policy = LanguagePolicy(lambda p: Reply("1", 10, 1))
    import numpy as np

    assert policy.act_with_env(env.unwrapped, env.agent_selection, np.random.default_rng(0)) == 0
    (exchange,) = policy.take_exchanges(env.unwrapped)
    assert (exchange["answer"], exchange["prompt_tokens"], exchange["completion_tokens"]) == ("1", 10, 1)
    assert policy.take_exchanges(env.unwrapped) == []  # handed over once
    with pytest.raises(TypeError, match="reads the table's text, not a vector"):
        policy.act(np.zeros(3), np.ones(3), np.random.default_rng(0))


@pytest.mark.parametrize("name", ENVS)
def test_parlour_benchmark_rates_a_chat_model_against_the_bots_with_its_costs(
    name: str, server: tuple[str, FakeModel], tmp_path: Path
) -> None:
    from parlour.training.cli import main

    url, model = server
    out = tmp_path / "bench"
    assert main(["benchmark", name, f"chat:fake@{url}", "--deals", "1", "--out", str(out), "--no-progress"]) == 0
    report = json.loads((out / "benchmark.json").read_text())
    mine = [m for m in report["matchups"] if "language_agent" in m]
    assert {m["opponent"] for m in mine} >= {"random"} and len({m["policy"] for m in mine}) == 1
    for m in mine:
        talk = m["language_agent"]
        assert m["games"] == talk["games"] and talk["invalid"] == 0 and talk["forfeits"] == 0
        assert talk["requests"] > 0 and talk["completion_tokens"] == 5 * talk["requests"]
    assert sum(m["language_agent"]["requests"] for m in mine) == len(model.requests)
    table = (out / "benchmark.md").read_text()
    assert "| policy | opponent | requests | refused | forfeits | prompt tokens |" in table
    assert f"| {mine[0]['policy']} | random | " in table


@pytest.mark.parametrize("name", ENVS)
def test_the_fake_endpoint_client_plays_through_the_text_env_and_the_mcp_server(
    name: str, server: tuple[str, FakeModel]
) -> None:
    import asyncio

    from parlour.envs.text import TextEnv

    url, model = server
    client = chat_client(f"chat:fake@{url}")
    env = TextEnv(make(name))
    env.reset(seed=1)
    for _ in env.agent_iter():
        prompt, _, terminated, truncated, _info = env.last()
        env.step(None if terminated or truncated else client(prompt).text)
    assert replay(env.record()).final_outcome == env.record()["outcome"]
    assert all(i["text"]["invalid"] == 0 for i in env.infos.values())

    pytest.importorskip("mcp")
    from mcp import Client

    from parlour.training.serve.mcp_server import server as mcp_server

    async def play() -> dict[str, Any]:
        async with Client(mcp_server()) as tools:
            table = (await tools.call_tool("new_game", {"env": name, "seed": 2})).structured_content
            while not table["over"]:
                answer = client(table["prompt"]).text  # the model reads the served prompt and answers it
                r = await tools.call_tool("act", {"table": table["table"], "action": answer})
                assert not r.is_error, r.content
                table = r.structured_content | {"table": table["table"]}
            return (await tools.call_tool("record", {"table": table["table"]})).structured_content

    record = asyncio.run(play())
    assert replay(record).final_outcome == record["outcome"]

"""The browser pages of ``parlour serve`` (``training/serve/static/``: the play page and the replay viewer) and the
replay page ``parlour replay RECORD --html OUT.html`` writes.

The browser tests (slow tier: ``pytest -m slow tests/test_pages.py``) drive the system's Chromium
(``/usr/bin/chromium``; no browser is ever downloaded) with Playwright against the app served in-process by uvicorn
on a free port. They check that a replay in the page shows the moves and views ``parlour replay`` and the env show;
that a game played by clicking ends with the record the same moves make through the HTTP API; and that a seat's page
holds exactly the seat's payload, which does not move when everything hidden from the seat is redrawn, and none of
the hidden cards. ``PARLOUR_SCREENSHOTS=1`` also saves the docs' screenshots (``docs/images/play.png``,
``docs/images/replay.png``). The export's own checks need no browser and run in the default tier.
"""

from __future__ import annotations

import html
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from parlour.envs import make
from parlour.training.cli import main
from parlour.training.play import describe, positions
from parlour.training.serve.export import embedded_json, replay_page
from parlour.training.tables import record_frames, seat_payload

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
STATIC = ROOT / "training" / "serve" / "static"
IMAGES = ROOT / "docs" / "images"
#: One game of each family (the three Lady Alice versions share their page code).
FAMILIES = ["six_suspects_v0", "goes_to_eleven_v0", "lady_alice_v2", "elevenses_v0"]
VIEWPORT = {"width": 1000, "height": 700}
#: How long a page may take to answer a click (the server plays every other seat before it answers).
WAIT_MS = 60_000


def random_record(env_name: str, seed: int, **kwargs: Any) -> dict[str, Any]:
    """A finished game of uniformly random moves: ``env.record()``."""
    env = make(env_name, **kwargs).unwrapped
    env.reset(options={"game_seed": seed})
    rng = np.random.default_rng(seed)
    while not env.game_over:
        env.step(int(rng.choice(env.legal_actions())))
    return env.record()


# ---- the export (no browser) -------------------------------------------------------------------------------------


def _embedded(page: str) -> Any:
    start = page.index('<script type="application/json" id="frames">') + len(
        '<script type="application/json" id="frames">'
    )
    return json.loads(page[start : page.index("</script>", start)])


def test_the_export_embeds_the_frames_and_escapes_what_would_end_the_script() -> None:
    hostile = "</script><script>alert(1)</script><!-- & \u2028"
    frames = {"env": "x", "players": [hostile], "agents": ["player_0"], "game_seed": 1, "frames": [], "outcome": None}
    text = embedded_json(frames)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == frames
    page = replay_page(frames, perspective="umpire")
    assert page.count("</script>") == 2  # the inlined viewer's and the frames' own: the name did not end either
    assert _embedded(page) == frames | {"perspective": "umpire"}
    assert '<link rel="stylesheet"' not in page and 'src="' not in page  # the style and script are inline
    assert "<title>Parlour replay: x, seed 1</title>" in page


def test_replay_html_writes_one_page_and_refuses_to_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = random_record("six_suspects_v0", 3)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    out = tmp_path / "game.html"
    assert main(["replay", str(path), "--html", str(out)]) == 0
    assert f"wrote {out} ({len(record['actions'])} moves)" in capsys.readouterr().out
    embedded = _embedded(out.read_text(encoding="utf-8"))
    assert embedded == json.loads(json.dumps(record_frames(record))) | {"perspective": "player_0"}
    before = out.read_bytes()
    assert main(["replay", str(path), "--html", str(out), "--god"]) == 2
    assert "exists already; pass --overwrite" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert main(["replay", str(path), "--html", str(out), "--god", "--overwrite"]) == 0
    assert _embedded(out.read_text(encoding="utf-8"))["perspective"] == "umpire"
    assert main(["replay", str(path), "--html", str(tmp_path / "x.html"), "--perspective", "player_7"]) == 2
    assert "not a seat of this game" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()
    record["actions"][0]["action"] = 10_000  # a record that does not replay: one line, nothing written
    path.write_text(json.dumps(record))
    assert main(["replay", str(path), "--html", str(tmp_path / "y.html")]) == 2
    assert str(path) in capsys.readouterr().err
    assert not (tmp_path / "y.html").exists()


# ---- the browser -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"no system Chromium at {CHROMIUM} (apt install chromium); no browser is downloaded")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server() -> Iterator[SimpleNamespace]:
    """The app (``parlour serve``'s) on a free port of 127.0.0.1, in this process: its ``url`` and its ``tables``."""
    uvicorn = pytest.importorskip("uvicorn", reason='the server extra is not installed (pip install ".[serve]")')
    pytest.importorskip("starlette", reason='the server extra is not installed (pip install ".[serve]")')
    from parlour.training.serve.api import app
    from parlour.training.tables import Tables

    tables = Tables()
    web = uvicorn.Server(uvicorn.Config(app(tables), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=web.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not web.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = web.servers[0].sockets[0].getsockname()[1]
    yield SimpleNamespace(url=f"http://127.0.0.1:{port}", tables=tables)
    web.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (1000×700); any script error on it fails the test."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(WAIT_MS)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    yield tab
    context.close()
    assert not errors, f"script errors on the page: {errors}"


def screenshot(tab: Any, name: str) -> None:
    """Save ``docs/images/NAME`` for the docs, only when ``PARLOUR_SCREENSHOTS=1`` (normal runs leave the tree alone)."""
    if os.environ.get("PARLOUR_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(IMAGES / name))


def blur(tab: Any) -> None:
    """Keys go to the page, not to the control last used (a select or file input keeps its own keys)."""
    tab.evaluate("document.activeElement && document.activeElement.blur()")


REPLAY_STATE = """() => ({
  step: Number(document.getElementById('step').dataset.step),
  view: document.getElementById('view').textContent,
  agent: document.getElementById('move').dataset.agent,
  name: document.getElementById('move').dataset.name,
  move: document.getElementById('move').textContent,
  legal: [...document.querySelectorAll('#legal li[data-action]')].map(li => li.dataset.action),
  chosen: [...document.querySelectorAll('#legal li[data-chosen]')].map(li => li.dataset.action),
  toAct: document.getElementById('to-act').dataset.agent,
})"""


def check_replay(tab: Any, record: dict[str, Any], eyes: str) -> None:
    """Step the open replay through ``eyes`` (a seat or ``umpire``) from the first position to the end with the →
    key, and check at each step the page's view, move and legal actions against ``parlour replay``'s positions."""
    states = positions(record)
    n = len(record["actions"])
    assert tab.locator("#replay").get_attribute("data-moves") == str(n)
    tab.select_option("#perspective", eyes)
    blur(tab)
    tab.keyboard.press("Home")
    perspective = None if eyes == "umpire" else eyes
    for k, env in enumerate(states):
        got = tab.evaluate(REPLAY_STATE)
        assert got["step"] == k
        assert got["view"] == env.render_text(perspective=perspective), f"move {k + 1}: the view"
        told = describe(record, states, k, perspective)  # what `parlour replay` shows at this step
        if k == n:
            assert got["agent"] == "" and got["toAct"] == ""
            assert tab.locator("#outcome").is_visible()
            winners = ",".join(map(str, record["outcome"].get("winners", [])))
            assert tab.locator("#outcome").get_attribute("data-winners") == winners
            break
        action = int(record["actions"][k]["action"])
        assert got["agent"] == env.agent_selection == got["toAct"]
        whose = env.agent_selection if perspective is None else perspective
        mine = not env.game_over and env.agent_selection == whose
        assert got["legal"] == (env.legal_action_names(whose) if mine else [])
        if perspective is None or env.agent_selection == perspective:
            assert got["name"] == env.action_names[action] == env.decode_action(action)
            assert f"chose [{action}] {got['name']}, from" in told
            assert got["chosen"] == [got["name"]]
        else:  # as in `parlour replay`: another seat's move is announced, not named
            assert got["name"] == "" and got["move"].startswith(env.agent_selection) and " moves " in got["move"]
            assert told.endswith(" moves")
            assert env.action_names[action] not in got["move"]
        tab.keyboard.press("ArrowRight")
    tab.keyboard.press("ArrowRight")  # past the end: it stays there
    assert tab.evaluate(REPLAY_STATE)["step"] == n


@pytest.mark.slow
@pytest.mark.parametrize("env_name", FAMILIES)
def test_the_replay_viewer_shows_the_moves_and_views_of_parlour_replay(
    env_name: str, page: Any, server: SimpleNamespace, tmp_path: Path
) -> None:
    record = random_record(env_name, 11) | {"players": ["bot a", "person", "bot b", "bot c"], "human_seat": 1}
    path = tmp_path / f"{env_name}.json"
    path.write_text(json.dumps(record))
    # served: a plain record goes to POST /api/frames; the viewer opens through the person's seat
    page.goto(f"{server.url}/replay")
    page.set_input_files("#file", str(path))
    page.wait_for_selector("#replay:not([hidden])")
    assert page.locator("#perspective").input_value() == "player_1"
    check_replay(page, record, "player_1")
    check_replay(page, record, "umpire")
    assert page.locator("#message").get_attribute("class") == "note"

    # the page `parlour replay RECORD --html OUT.html` writes, opened from the file: no server, the same moves
    out = tmp_path / f"{env_name}.html"
    assert main(["replay", str(path), "--html", str(out), "--perspective", "player_2"]) == 0
    page.goto(out.as_uri())
    page.wait_for_selector("#replay:not([hidden])")
    assert page.locator("#perspective").input_value() == "player_2"
    assert page.locator("#nav").is_hidden()  # its links lead to parlour serve's pages
    check_replay(page, record, "player_2")
    check_replay(page, record, "umpire")
    if env_name == "six_suspects_v0":
        page.select_option("#perspective", "player_1")
        blur(page)
        page.keyboard.press("End")
        page.keyboard.press("ArrowLeft")  # the last move: player_1's own, its legal actions shown
        screenshot(page, "replay.png")


@pytest.mark.slow
def test_the_replay_viewer_opens_a_viewer_file_from_a_file_and_names_the_export_for_a_record(
    page: Any, tmp_path: Path
) -> None:
    record = random_record("goes_to_eleven_v0", 4)
    frames = record_frames(record)
    (tmp_path / "frames.json").write_text(json.dumps(frames))
    (tmp_path / "record.json").write_text(json.dumps(record))
    page.goto((STATIC / "replay.html").as_uri())  # the package's own page, from the file: its script beside it
    page.wait_for_selector("body[data-ready]")
    page.set_input_files("#file", str(tmp_path / "record.json"))
    message = page.locator("#message")
    page.wait_for_function("() => document.getElementById('message').textContent.includes('--html')")
    assert "parlour replay record.json --html OUT.html" in message.text_content()
    assert "\n" not in message.text_content() and page.locator("#replay").is_hidden()
    page.set_input_files("#file", str(tmp_path / "frames.json"))
    page.wait_for_selector("#replay:not([hidden])")
    check_replay(page, record, "umpire")
    check_replay(page, record, "player_3")
    # slider and buttons move as the keys do
    page.locator("#slider").fill("5")
    assert page.evaluate(REPLAY_STATE)["step"] == 5
    page.click("#next")
    page.click("#next")
    page.click("#prev")
    assert page.evaluate(REPLAY_STATE)["step"] == 6
    page.click("#last")
    assert page.evaluate(REPLAY_STATE)["step"] == len(record["actions"])
    page.click("#first")
    assert page.evaluate(REPLAY_STATE)["step"] == 0
    page.click("#moves li[data-step='7']")
    assert page.evaluate(REPLAY_STATE)["step"] == 7
    (tmp_path / "bad.json").write_text("{not json")
    page.set_input_files("#file", str(tmp_path / "bad.json"))
    page.wait_for_function("() => document.getElementById('message').textContent.includes('is not JSON')")


def start_game(tab: Any, url: str, env_name: str, seed: int, seat: int = 0) -> str:
    """Start a game on the play page (the default opponents: the game's heuristic); the table's id."""
    tab.goto(url + "/")
    tab.wait_for_selector("body[data-ready]")
    tab.select_option("#env", env_name)
    tab.select_option("#seat", str(seat))
    heuristic = env_name.rsplit("_v", 1)[0] + "_heuristic"
    for select in tab.locator("#opponents select").all():
        assert select.input_value() == heuristic  # the default: the game's heuristic, never only random
    tab.fill("#seed", str(seed))
    tab.click("#start")
    tab.wait_for_selector("#game:not([hidden])")
    return str(tab.locator("#game").get_attribute("data-table"))


PLAY_STATE = """() => ({
  view: document.getElementById('view').textContent,
  legal: [...document.querySelectorAll('#legal button[data-action]')].map(b => b.dataset.action),
  shown: [...document.querySelectorAll('#legal button[data-action] .name')].map(s => s.textContent),
  state: document.getElementById('status').dataset.state,
  toAct: document.getElementById('status').dataset.toAct,
  log: [...document.querySelectorAll('#log li')].map(li => li.textContent),
  error: document.getElementById('error').hidden ? '' : document.getElementById('error').textContent,
})"""


def play_first(tab: Any, by_key: bool) -> str:
    """Play the first legal action (its button, or the key 1) and wait for the server's answer; its name."""
    before = tab.evaluate(PLAY_STATE)
    name = before["legal"][0]
    if by_key:
        blur(tab)
        tab.keyboard.press("1")
        if len(before["legal"]) >= 10:  # 1 could begin 10..19: Enter plays it at once
            tab.keyboard.press("Enter")
    else:
        tab.click("#legal button[data-action] >> nth=0")
    tab.wait_for_function(
        "n => document.querySelectorAll('#log li').length === n && !document.querySelector('#legal[aria-busy=true]')",
        arg=len(before["log"]) + 1,
    )
    return name


@pytest.mark.slow
@pytest.mark.parametrize(("env_name", "seed", "seat"), [("six_suspects_v0", 7, 0), ("goes_to_eleven_v0", 5, 2)])
def test_a_game_played_on_the_page_is_the_game_the_same_moves_make_through_the_api(
    env_name: str, seed: int, seat: int, page: Any, server: SimpleNamespace, tmp_path: Path
) -> None:
    from starlette.testclient import TestClient

    from parlour.training.serve.api import app

    start_game(page, server.url, env_name, seed, seat)
    assert page.evaluate(PLAY_STATE)["state"] == "your-turn"
    # a refusal is the server's one line; nothing moves
    before = page.evaluate(PLAY_STATE)
    page.evaluate("window.parlourPlay.act('no such move')")
    page.wait_for_selector("#error:not([hidden])")
    after = page.evaluate(PLAY_STATE)
    assert after["error"].startswith("no legal action") or "legal actions:" in after["error"], after["error"]
    assert "\n" not in after["error"]
    assert {**after, "error": ""} == before
    chosen = []
    while page.evaluate(PLAY_STATE)["state"] != "over":
        chosen.append(play_first(page, by_key=len(chosen) % 2 == 1))
        if len(chosen) == 3 and env_name == "six_suspects_v0":
            screenshot(page, "play.png")
    got = page.evaluate(PLAY_STATE)
    assert got["log"] == chosen and got["legal"] == [] and got["error"] == ""
    assert page.locator("#outcome").is_visible()
    with page.expect_download() as download:
        page.click("#download")
    mine = json.loads(Path(download.value.path()).read_text())

    # the same choices through the HTTP API, at a fresh server: the same record
    client = TestClient(app())
    answer = client.post("/api/tables", json={"env": env_name, "seat": seat, "seed": seed}).json()
    table = answer["table"]
    for name in chosen:
        assert answer["legal"][0] == name
        answer = client.post(f"/api/tables/{table}/act", json={"action": name}).json()
    assert answer["over"]
    theirs = client.get(f"/api/tables/{table}/record").json()
    assert mine["actions"] == theirs["actions"]
    assert mine["outcome"] == theirs["outcome"]
    assert mine["game_seed"] == seed and mine["human_seat"] == seat
    assert page.locator("#outcome").get_attribute("data-winners") == ",".join(map(str, mine["outcome"]["winners"]))

    # the game just played, in the replay viewer: through the person's seat, every move of the record
    page.click("#open-replay")
    page.wait_for_selector("#replay:not([hidden])")
    assert page.locator("#perspective").input_value() == f"player_{seat}"
    check_replay(page, mine, "umpire")


def secrets_of(env: Any, agent: str, twins: list[Any]) -> list[str]:
    """The umpire's lines that carry something hidden from ``agent``: those a redraw of the hidden changed."""
    theirs = {line for twin in twins for line in twin.render_text(perspective=None).split("\n")}
    seen = set(env.render_text(perspective=agent).split("\n"))
    lines = env.render_text(perspective=None).split("\n")
    return [line for line in lines if line not in theirs and line not in seen and len(line.strip()) >= 8]


@pytest.mark.slow
@pytest.mark.parametrize("env_name", FAMILIES)
def test_a_seats_page_holds_its_payload_only_the_same_in_every_twin_world(
    env_name: str, page: Any, server: SimpleNamespace
) -> None:
    table = start_game(page, server.url, env_name, seed=23, seat=1)
    session = server.tables.get(table)
    agent = session.agent
    rng = np.random.default_rng(0)
    found = 0
    for _ in range(6):
        got = page.evaluate(PLAY_STATE)
        held = page.evaluate("() => window.parlourPlay.state().payload")
        with session.lock:
            env = session.env
            twins = [env.resample_hidden(agent, rng) for _ in range(4)]
            secrets = secrets_of(env, agent, twins)
            for twin in twins:
                payload = seat_payload(twin, agent)
                assert got["view"] == payload["view"]
                assert got["legal"] == got["shown"] == payload["legal"]
                assert {k: v for k, v in held.items() if k != "table"} == json.loads(json.dumps(payload))
        content = page.content()
        text = page.evaluate("() => document.documentElement.textContent")
        for secret in secrets:
            assert html.escape(secret, quote=False) not in content and secret not in content, secret
            assert secret not in text, secret
        found += len(secrets)
        if got["state"] == "over":
            break
        play_first(page, by_key=False)
    assert found, "no line of the umpire's view changed across the twins: the check saw nothing hidden"

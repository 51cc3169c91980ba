"""Text mode (issue 41): prompts, answers, the AEC text env, its refused-answer policy and its records; the prompt in
the hidden-information audit, a twin-world check of every seat's whole prompt, and a planted leak caught."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parlour.envs import ENVIRONMENTS, checks, make, replay, text
from parlour.envs.text import CHARSET, FORFEIT, RANDOM_MOVE, AnswerPolicy, TextEnv, prompt, read_answer

GOLDEN = Path(__file__).parent / "golden"
ENVS = sorted(ENVIRONMENTS)


def listed_actions(prompt_text: str) -> list[str]:
    """The numbered lines after "Your legal actions:" (and before the blank line that ends them)."""
    after = prompt_text.split("\nYour legal actions:\n", 1)[1]
    return after.split("\n\n", 1)[0].splitlines()


def scripted(prompt_text: str, rng: np.random.Generator) -> str:
    """A scripted text agent: reads the numbered legal actions off the prompt and answers one of them, sometimes by
    number and sometimes by name in another case."""
    listed = [line.split(". ", 1)[1] for line in listed_actions(prompt_text)]
    k = int(rng.integers(len(listed)))
    return str(k + 1) if rng.random() < 0.5 else f"  {listed[k].upper()} "


@pytest.mark.parametrize("name", ENVS)
def test_a_scripted_text_agent_plays_whole_games_and_they_are_the_games_of_its_actions(name: str) -> None:
    rng = np.random.default_rng(5)
    for seed in range(3):
        env = TextEnv(make(name))
        env.reset(seed=seed)
        for agent in env.agent_iter():
            seen, _, terminated, truncated, info = env.last()
            assert isinstance(seen, str) and env.observation_space(agent).contains(seen)
            assert info["text"] == {"invalid": 0, "reprompts": 0, "forfeits": 0, "random_moves": 0}
            env.step(None if terminated or truncated else scripted(seen, rng))
        record = env.record()
        # the text game is the game of the actions it chose: the record replays to the same outcome
        assert replay(json.loads(json.dumps(record))).final_outcome == record["outcome"]
        chosen = [e["action"] for e in record["exchanges"]]
        assert chosen == [m["action"] for m in record["actions"]]
        assert record["text"]["format"] == text.TEXT_FORMAT


@pytest.mark.parametrize("name", ENVS)
def test_every_prompt_of_the_golden_traces_lists_exactly_the_legal_actions_and_fits_its_space(name: str) -> None:
    stored = json.loads((GOLDEN / f"{name}.json").read_text())
    for game in stored["games"][:3]:
        env = make(name, **game["kwargs"])
        env.reset(seed=game["seed"])
        raw = env.unwrapped
        space = TextEnv(env).observation_space("player_0")
        for row in game["steps"]:
            agent, action = row[0], row[1]
            if action is not None:
                p = prompt(raw, agent)
                assert space.contains(p), set(p) - CHARSET
                listed = listed_actions(p)
                assert listed == [f"{i}. {n}" for i, n in enumerate(raw.legal_action_names(), 1)]
                assert f"You are {agent} in a game of {raw.title}" in p
                assert raw.render_text(perspective=agent) in p
                waiting = [a for a in env.agents if a != agent][0]
                assert f"It is {agent}'s turn; you wait." in prompt(raw, waiting)
                assert "Your legal actions" not in prompt(raw, waiting)
            env.step(action)
        assert "The game is over." in prompt(raw, "player_0")


#: (answer, the action it chooses as an index into the legal list, or the start of the reason it is refused)
ANSWERS: list[tuple[Any, int | str]] = [
    ("1", 0),
    (" 2 ", 1),
    ("2.", 1),
    ("`3`", 2),
    ("{name1}", 0),
    ("  {NAME2}  ", 1),
    ("{name2}.", 1),
    ('"{name2}"', 1),
    ("I will look where nobody has.\n\n{name3}", 2),
    ("0", "0 is not a number in the list"),
    ("99", "99 is not a number in the list"),
    ("dance", "'dance' is neither a legal action's name nor its number"),
    ("", "'' is neither"),
    ("vote Albert", "'vote Albert' is not a legal action now"),
    (3, "an answer is text, not int"),
    (None, "an answer is text, not NoneType"),
    ("x" * 3000, "the answer is 3000 characters long"),
]


@pytest.mark.parametrize(("answer", "expected"), ANSWERS)
def test_an_answer_is_a_legal_actions_name_or_number_and_anything_else_is_refused_with_a_reason(
    answer: Any, expected: int | str
) -> None:
    env = make("six_suspects_v0")
    env.reset(seed=0)
    raw = env.unwrapped
    agent = env.agent_selection
    names = raw.legal_action_names()
    if isinstance(answer, str):
        answer = answer.format(name1=names[0], name2=names[1], NAME2=names[1].upper(), name3=names[2])
    action, reason = read_answer(raw, agent, answer)
    if isinstance(expected, int):
        assert (action, reason) == (raw.legal_actions()[expected], "")
    else:
        assert action is None and reason.startswith(expected), reason


def test_refused_answers_are_reprompted_with_the_reason_then_forfeit_by_default() -> None:
    env = TextEnv(make("goes_to_eleven_v0"))
    assert env.policy == AnswerPolicy(retries=1, on_invalid=FORFEIT)
    env.reset(seed=4)
    env.step("1")
    agent = env.agent_selection
    env.step("dance")
    assert env.agent_selection == agent  # still its decision
    again = env.observe(agent)
    assert "Your previous answer was not accepted: 'dance' is neither" in again
    assert "not accepted" not in env.observe(next(a for a in env.agents if a != agent))
    assert env.infos[agent]["text"] == {"invalid": 1, "reprompts": 1, "forfeits": 0, "random_moves": 0}
    assert env.rewards[agent] == 0.0
    env.step("0")
    assert env.terminations[agent] and env.rewards[agent] == -1.0
    assert all(env.rewards[a] == 0.0 for a in env.agents if a != agent)
    assert env.infos[agent]["text"]["forfeits"] == 1 and env.infos[agent]["text"]["invalid"] == 2
    assert "0 is not a number in the list" in env.infos[agent]["forfeit"]["reason"]
    others = [env.infos[a] for a in env.agents if a != agent]
    assert all(i["outcome"]["forfeit"] == {"agent": agent} and "forfeit" not in i for i in others)
    record = env.record()
    assert record["forfeit"] == {"seat": int(agent.split("_")[1])}
    assert [e.get("refused", "")[:4] for e in record["exchanges"][1:]] == ["'dan", "0 is"]
    assert replay(json.loads(json.dumps(record))).final_outcome == record["outcome"]


def test_a_random_fallback_is_drawn_from_the_seed_and_the_game_goes_on() -> None:
    def play(seed: int) -> dict[str, Any]:
        env = TextEnv(make("lady_alice_v2"), AnswerPolicy(retries=0, on_invalid=RANDOM_MOVE))
        env.reset(seed=seed)
        for _ in env.agent_iter():
            _, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else "no idea")
        return env.record()

    first, again, other = play(1), play(1), play(2)
    assert first == again and first["actions"] != other["actions"]
    assert "forfeit" not in first and all("refused" in e for e in first["exchanges"])
    assert replay(first).final_outcome == first["outcome"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"retries": -1}, "retries=-1 is not valid"),
        ({"retries": True}, "retries=True is not valid"),
        ({"on_invalid": "pass"}, "on_invalid='pass' is not valid: expected one of ['forfeit', 'random']"),
    ],
)
def test_a_bad_answer_policy_is_refused_in_one_line(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        AnswerPolicy(**kwargs)


@pytest.mark.parametrize("name", ENVS)
def test_twin_worlds_give_every_seat_the_same_whole_prompt(name: str) -> None:
    """Worlds a seat cannot tell apart (everything hidden from it redrawn) give it the same prompt -- rules, view,
    legal actions, answer format, and the reason a refused answer was refused -- at every decision."""
    rng = np.random.default_rng(11)
    checked = 0
    for game, point in enumerate(checks.random_decision_points(make(name).unwrapped, rng, seed=7)):
        if game % 5 or point.game_over:
            continue
        for agent in point.agents:
            twin = point.resample_hidden(agent, rng)
            assert prompt(point, agent) == prompt(twin, agent), f"{name}: {agent}'s prompt moved"
            if agent == point.agent_selection:
                why = [read_answer(w, agent, "vote for nobody")[1] for w in (point, twin)]
                assert why[0] == why[1]
            checked += 1
    assert checked > 20


def test_a_prompt_that_leaks_is_caught_by_the_audit(monkeypatch: pytest.MonkeyPatch) -> None:
    honest = text.prompt

    def leaky(env: Any, agent: str, **kwargs: Any) -> str:
        # a planted leak: the umpire's view (every hidden card) at the end of the prompt
        return honest(env, agent, **kwargs) + "\n" + env.render_text(perspective=None)

    checks.hidden_information_audit(lambda: make("lady_alice_v2").unwrapped, games=1, every=5, samples=1)
    monkeypatch.setattr(text, "prompt", leaky)
    with pytest.raises(AssertionError, match="hidden information leaks into the prompt"):
        checks.hidden_information_audit(lambda: make("lady_alice_v2").unwrapped, games=1, every=5, samples=1)

"""One seat in text (issue 41): a Gymnasium env of prompts and answers, the other seats played by Parlour bots; its
episodes are the games of the answers given, refused answers are re-prompted then forfeit, and records keep every
prompt and answer."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from parlour.baselines import resolve
from parlour.envs import ENVIRONMENTS, make, replay
from parlour.envs.text import AnswerPolicy
from parlour.training.text_seat import TextSeatEnv


def first_listed(prompt: str) -> str:
    after = prompt.split("\nYour legal actions:\n", 1)[1]
    return after.splitlines()[0].split(". ", 1)[1]


def paid(record: dict[str, Any], agent: str) -> float:
    env = make(record["env"], **record["options"])
    env.reset(options={"game_seed": record["game_seed"]})
    total = 0.0
    for move in record["actions"]:
        env.step(move["action"])
        total += env.rewards[agent]
    if "forfeit" in record:
        env.unwrapped.forfeit("replayed")
        total += env.rewards[agent]
    return total


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_a_text_seat_plays_whole_episodes_against_bots_and_each_is_the_game_of_its_answers(name: str) -> None:
    game = name.rsplit("_v", 1)[0]
    env = TextSeatEnv(name, [resolve(f"{game}_heuristic", name)], seed=3)
    rng = np.random.default_rng(0)
    for episode in range(2):
        prompt, info = env.reset(seed=episode)
        assert env.observation_space.contains(prompt) and info["text"]["invalid"] == 0
        total, done = 0.0, False
        while not done:
            answer = first_listed(prompt) if rng.random() < 0.5 else "1"
            prompt, reward, terminated, truncated, info = env.step(answer)
            total += reward
            done = terminated or truncated
        record = env.record()
        outcome = replay(json.loads(json.dumps(record))).final_outcome
        assert outcome == record["outcome"] == info["outcome"]
        mine = [m["action"] for m in record["actions"] if m["agent"] == env.learner]
        assert [e["action"] for e in record["exchanges"]] == mine
        # the episode's return is everything the seat was paid in the game its record replays
        assert total == pytest.approx(paid(record, env.learner))


def test_a_refused_answer_is_a_step_of_its_own_then_the_seat_forfeits() -> None:
    env = TextSeatEnv("goes_to_eleven_v0", [resolve("random", "goes_to_eleven_v0")], learner_seat=1)
    prompt, _ = env.reset(seed=2)
    again, reward, terminated, truncated, info = env.step("play nothing")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert "Your previous answer was not accepted: 'play nothing' is neither" in again
    assert info["text"] == {"invalid": 1, "reprompts": 1, "forfeits": 0, "random_moves": 0}
    _, reward, terminated, truncated, info = env.step(17)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["text"]["forfeits"] == 1 and "an answer is text, not int" in info["forfeit"]["reason"]
    record = env.record()
    assert record["forfeit"] == {"seat": 1} and replay(record).final_outcome == record["outcome"]
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step("1")


def test_a_random_fallback_is_reproducible_from_the_seed() -> None:
    def play(seed: int) -> dict[str, Any]:
        env = TextSeatEnv(
            "six_suspects_v0", [resolve("random", "six_suspects_v0")], answers=AnswerPolicy(0, "random"), seed=seed
        )
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step("?")
            done = terminated or truncated
        assert info["text"]["random_moves"] == info["text"]["invalid"] > 0
        return env.record()

    assert play(4) == play(4) and play(4)["actions"] != play(5)["actions"]

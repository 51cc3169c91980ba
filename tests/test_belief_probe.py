"""The belief probe (issue 41, item 7): a language agent asked for the hidden fact its game turns on, scored against
the truth and against the exact posterior of the seat's view where the game has one."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from parlour.baselines import resolve
from parlour.baselines.language import LanguagePolicy
from parlour.baselines.probe import PROBES, calibration, log_score, probe_for, probe_prompt, read_probabilities
from parlour.envs import make
from parlour.envs.checks import random_decision_points
from parlour.training.evaluation.matchups import play_matchup

PROBED = ["six_suspects_v0", "lady_alice_v2", "elevenses_v0"]


def states(name: str, every: int = 3) -> list[Any]:
    out = []
    for i, point in enumerate(random_decision_points(make(name).unwrapped, np.random.default_rng(1), seed=2)):
        if i % every == 0 and not point.game_over:
            out.append(point.clone())
    return out


@pytest.mark.parametrize("name", PROBED)
def test_the_posterior_is_a_function_of_the_seats_view_and_the_truth_is_hidden_from_it(name: str) -> None:
    rng = np.random.default_rng(0)
    moved = 0
    for env in states(name):
        agent = env.agent_selection
        probe = probe_for(env)
        twin = env.resample_hidden(agent, rng)
        assert probe_prompt(env, agent, probe) == probe_prompt(twin, agent, probe)
        if probe.posterior is not None:
            assert np.array_equal(probe.posterior(env, agent), probe.posterior(twin, agent))
        moved += not np.array_equal(probe.truth(env, agent), probe.truth(twin, agent))
    assert moved > 0  # the truth is hidden: some worlds the seat cannot tell apart differ in it


@pytest.mark.parametrize("name", ["six_suspects_v0", "lady_alice_v2"])
def test_the_exact_posterior_scores_better_than_a_uniform_answer_and_never_rules_out_the_truth(name: str) -> None:
    ours, uniform = [], []
    for env in states(name, every=2):
        agent = env.agent_selection
        probe = probe_for(env)
        truth, p = probe.truth(env, agent), probe.posterior(env, agent)  # type: ignore[misc]
        if name == "lady_alice_v2":
            assert (p[truth] > 0).all()  # the true solution is always consistent with the seat's view
        ours.append(log_score(p, truth))
        uniform.append(log_score(np.full(len(truth), truth.mean()), truth))
    assert len(ours) >= 20 and np.mean(ours) > np.mean(uniform)


#: (answer, expected probabilities for Albert … Francine or the start of the refusal)
ANSWERS: list[tuple[Any, list[float] | str]] = [
    ("Albert: 10%\nBeatrice: 20%\nCharles: 30%\nDenise: 0%\nEdgar: 40%\nFrancine: 0%", [0.1, 0.2, 0.3, 0, 0.4, 0]),
    (
        "- albert = 0.1\n* BEATRICE: 0.2\ncharles:30\ndenise: 0\nedgar : 40 %\n**Francine**: 0",
        [0.1, 0.2, 0.3, 0, 0.4, 0],
    ),
    ("Albert: 10%\nBeatrice: 20%", "no probability for 'Charles'"),
    (
        "Albert: 10%\nBeatrice: 200%\nCharles: 1\nDenise: 0\nEdgar: 0\nFrancine: 0",
        "Beatrice: 200% is not a probability",
    ),
    (7, "an answer is text, not int"),
]


@pytest.mark.parametrize(("answer", "expected"), ANSWERS)
def test_probe_answers_are_read_or_refused_with_a_reason(answer: Any, expected: list[float] | str) -> None:
    probe = probe_for(make("six_suspects_v0").unwrapped)
    q, reason = read_probabilities(answer, probe.options)
    if isinstance(expected, str):
        assert q is None and reason.startswith(expected), reason
    else:
        assert reason == "" and np.allclose(q, expected)  # type: ignore[arg-type]


def test_the_scores_are_the_textbook_ones() -> None:
    assert log_score(np.array([0.5]), np.array([True])) == pytest.approx(math.log(0.5))
    assert log_score(np.array([0.0, 1.0]), np.array([True, False])) == pytest.approx(math.log(0.01))  # held at 1%
    assert log_score(np.array([0.8, 0.2]), np.array([True, False])) == pytest.approx(math.log(0.8))
    c = calibration(np.array([0.25] * 8 + [0.95] * 2), np.array([1, 0, 0, 0, 0, 1, 0, 0, 1, 1]))
    assert c["ece"] == pytest.approx(0.8 * 0.0 + 0.2 * 0.05)
    assert [b["count"] for b in c["bins"]] == [8, 2]


def uniform_agent(prompt: str) -> str:
    """Moves: the first legal action; probes: the same probability for every possibility."""
    if "Answer with one line for each of the following" in prompt:
        options = prompt.split("and nothing else:\n", 1)[1].splitlines()
        return "\n".join(f"{o}: {100 / len(options):.1f}%" for o in options)
    return "1"


@pytest.mark.parametrize("name", PROBED)
def test_a_probed_language_agent_is_scored_beside_its_win_rate(name: str) -> None:
    agent = LanguagePolicy(uniform_agent, name="uniform", probe_every=3)
    m = play_matchup(name, agent, resolve("random", name), num_players=4, games=2)
    probe = m.summary()["language_agent"]["probe"]
    assert probe["asked"] == probe["scored"] > 0 and probe["log_score"] < 0
    assert ("posterior_log_score" in probe) == (name != "elevenses_v0")
    assert 0 <= probe["calibration"]["ece"] <= 1 and "Bernoulli log score" in probe["method"]
    if name != "elevenses_v0":
        # the exact posterior scores better on the same questions than an agent that knows nothing
        assert probe["posterior_log_score"] > probe["agent_log_score_paired"]


def test_a_probe_at_a_game_without_one_is_refused_before_the_first_step() -> None:
    assert "goes_to_eleven" not in PROBES
    agent = LanguagePolicy(uniform_agent, probe_every=1)
    with pytest.raises(ValueError, match="goes_to_eleven_v0 has no belief probe"):
        play_matchup("goes_to_eleven_v0", agent, resolve("random", "goes_to_eleven_v0"), num_players=4, games=1)
    with pytest.raises(ValueError, match="probe_every=-1 is not valid"):
        LanguagePolicy(uniform_agent, probe_every=-1)

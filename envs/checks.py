"""Reusable checks for any Parlour environment (and for users' own envs built on :class:`ParlourEnv`).

- :func:`hidden_information_audit`: redraws everything hidden from an agent and asserts that nothing it is shown
  (observation, mask, infos, perspective text, the whole prompt of :mod:`parlour.envs.text`, mid-game rewards, and the final infos and reward when the acting seat
  is penalised for an illegal action) changes; that the redraw really changes hidden state in a good share of cases;
  and that a change of what the agent *can* know does change its observation.
- :func:`fuzz`: many seeded random games, checking the game's invariants and the API's promises at every step,
  and that every game ends within a bound.
- :func:`replay_check`: record → JSON → replay gives identical observations, rewards and outcome.
- :func:`copy_check`: a pickled copy and a ``clone()`` taken mid-game go on exactly like the original.

Each raises ``AssertionError`` with a message saying what broke, and returns a small report of what it covered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from parlour.envs import text
from parlour.envs.core import ILLEGAL_PENALIZE, ParlourEnv

EnvFactory = Callable[[], ParlourEnv[Any]]


def _random_action(env: ParlourEnv[Any], rng: np.random.Generator) -> int | None:
    agent = env.agent_selection
    if env.terminations[agent] or env.truncations[agent]:
        return None
    legal = np.flatnonzero(env.observe(agent)["action_mask"])
    assert len(legal) > 0, f"{env}: {agent} is to act but its mask is empty"
    return int(legal[rng.integers(len(legal))])


def random_decision_points(env: ParlourEnv[Any], rng: np.random.Generator, seed: int) -> Iterator[ParlourEnv[Any]]:
    """Play one seeded random game, yielding the env before every step (terminal steps included)."""
    env.reset(seed=seed)
    for _ in env.agent_iter():
        yield env
        env.step(_random_action(env, rng))


def _views(env: ParlourEnv[Any], agent: str) -> tuple[bytes, bytes, str, str, str]:
    obs = env.observe(agent)
    return (
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        repr(env.infos.get(agent)),
        env.render_text(perspective=agent),
        # the whole prompt a language agent reads (its view, legal action names, answer format): parlour.envs.text
        text.prompt(env, agent, rules=False),  # (the rules in brief are the same text for every state)
    )


@dataclass
class AuditReport:
    points: int = 0
    resamples: int = 0
    hidden_changed: int = 0
    visible_changes_checked: int = 0
    #: Illegal actions played (penalty mode) in a true and a resampled world, the agent's final infos compared.
    illegal_actions_checked: int = 0

    @property
    def hidden_change_share(self) -> float:
        return self.hidden_changed / max(1, self.resamples)


def hidden_information_audit(
    env_fn: EnvFactory,
    *,
    games: int = 10,
    seed: int = 0,
    every: int = 1,
    samples: int = 2,
    min_hidden_change_share: float = 0.5,
) -> AuditReport:
    """Audit that no agent's view depends on what is hidden from it.

    At every ``every``-th decision point of ``games`` seeded random games, for every live agent, draw
    ``samples`` resampled copies (``resample_hidden``) and assert that the agent's observation, mask, infos,
    perspective text and prompt (:func:`parlour.envs.text.prompt`) are byte-identical, that what it knows is kept, and that the copy satisfies the game's
    invariants. The share of copies whose hidden part changed must reach ``min_hidden_change_share`` (a
    resampler that returns the truth fails). In the true and one resampled world, the acting seat (this agent or
    another) then plays the same illegal action under ``illegal_action="penalize"``: this agent's final infos and
    reward must agree, all but the outcome's revealed game state (an explanation of the offence that names the
    offender's legal actions, and so its hand, to the other seats fails). Then resample for each *other* agent:
    wherever that changes what this agent knows, this agent's observation must change (an observation that omits
    what the agent saw fails).
    """
    rng = np.random.default_rng(seed)
    report = AuditReport()
    for g in range(games):
        env = env_fn()
        for i, point in enumerate(random_decision_points(env, np.random.default_rng([seed, g]), seed + g)):
            if i % every:
                continue
            report.points += 1
            live = [a for a in point.agents if not (point.terminations[a] or point.truncations[a])]
            for agent in live:
                views = _views(point, agent)
                known, hidden = point.private_knowledge(agent)
                for _ in range(samples):
                    copy = point.resample_hidden(agent, rng)
                    where = f"{point}, game seed {seed + g}, decision {i}, {agent}"
                    new = _views(copy, agent)
                    for name, a, b in zip(
                        ("observation", "action mask", "infos", "text view", "prompt"), views, new, strict=True
                    ):
                        assert a == b, f"hidden information leaks into the {name} of {where}"
                    known2, hidden2 = copy.private_knowledge(agent)
                    assert known2 == known, f"resample_hidden changed what {agent} knows ({where})"
                    copy.invariants()
                    report.resamples += 1
                    report.hidden_changed += hidden2 != hidden
                _check_step_infos(point, copy, agent, rng, where)
                report.illegal_actions_checked += _check_illegal_infos(point, copy, agent, where)
                for other in point.agents:
                    if other == agent:
                        continue
                    copy = point.resample_hidden(other, rng)
                    if copy.private_knowledge(agent)[0] != known:
                        report.visible_changes_checked += 1
                        assert copy.observe(agent)["observation"].tobytes() != views[0], (
                            f"{agent}'s observation ignores a change in what it knows ({point}, decision {i})"
                        )
    assert report.resamples > 0, "the audit checked nothing"
    assert report.hidden_change_share >= min_hidden_change_share, (
        f"resample_hidden changed hidden state in only {report.hidden_change_share:.0%} of {report.resamples} "
        f"draws (need {min_hidden_change_share:.0%}): it does not really redraw what is hidden"
    )
    assert report.visible_changes_checked > 0, "the audit never saw a change of known information to test"
    return report


def _check_step_infos(
    original: ParlourEnv[Any], resampled: ParlourEnv[Any], agent: str, rng: np.random.Generator, where: str
) -> None:
    """Step the true and a resampled world with the same action: unless the step ends the game or shows ``agent``
    something that differs between the worlds, ``agent``'s infos and reward must agree (they are made during
    ``step``, so comparing the worlds at rest would miss them)."""
    actor = original.agent_selection
    if original.terminations[actor] or original.truncations[actor]:
        return
    both = original.observe(actor)["action_mask"] & resampled.observe(actor)["action_mask"]
    legal = np.flatnonzero(both)
    if len(legal) == 0:
        return
    action = int(legal[rng.integers(len(legal))])
    a, b = original.clone(), resampled.clone()
    a.step(action)
    b.step(action)
    if a.game_over or b.game_over or a.private_knowledge(agent)[0] != b.private_knowledge(agent)[0]:
        return
    assert repr(a.infos.get(agent)) == repr(b.infos.get(agent)), f"hidden information leaks into the infos of {where}"
    assert a._cumulative_rewards.get(agent) == b._cumulative_rewards.get(agent), (
        f"hidden information leaks into the reward of {where}"
    )


def _final_view(env: ParlourEnv[Any], agent: str) -> str:
    """What ``agent`` is told when the game has ended: its infos and reward, with the outcome's revealed game state
    (legitimately world-dependent) left out -- only the outcome fields the driver adds are kept."""
    info = dict(env.infos.get(agent) or {})
    outcome = info.pop("outcome", None)
    if isinstance(outcome, dict):
        outcome = {k: outcome.get(k) for k in ("truncated", "illegal_action")}
    return repr((info, outcome, env.rewards.get(agent), env._cumulative_rewards.get(agent)))


def _check_illegal_infos(original: ParlourEnv[Any], resampled: ParlourEnv[Any], agent: str, where: str) -> bool:
    """In penalty mode, the acting seat plays the same illegal action (illegal in both worlds; out of range if every
    action is legal in one of them) in the true and a world resampled for ``agent``: the game ends, and what
    ``agent`` is told of it must agree. Returns whether a check was made."""
    actor = original.agent_selection
    if original.game_over or original.terminations[actor] or original.truncations[actor]:
        return False
    either = original.observe(actor)["action_mask"] | resampled.observe(actor)["action_mask"]
    illegal = np.flatnonzero(either == 0)
    action = int(illegal[0]) if len(illegal) else original.num_actions
    views = []
    for world in (original, resampled):
        penalised = world.clone()
        penalised.illegal_action = ILLEGAL_PENALIZE
        penalised.step(action)
        assert penalised.game_over, f"{world}: an illegal action in penalty mode did not end the game ({where})"
        views.append(_final_view(penalised, agent))
    assert views[0] == views[1], (
        f"hidden information leaks into the final infos of {where} after {actor}'s illegal action {action}"
    )
    return True


@dataclass
class FuzzReport:
    games: int = 0
    steps: int = 0
    longest: int = 0
    truncated: int = 0


def fuzz(env_fn: EnvFactory, *, games: int = 50, seed: int = 0, max_steps: int = 100_000) -> FuzzReport:
    """Play seeded random games, checking invariants and API promises at every step."""
    report = FuzzReport()
    for g in range(games):
        env = env_fn()
        rng = np.random.default_rng([seed, g])
        steps = 0
        for point in random_decision_points(env, rng, seed + g):
            agent = point.agent_selection
            point.invariants()
            obs = point.observe(agent)
            space = point.observation_space(agent)
            assert space.contains(obs), f"{point}: observation of {agent} is outside its space"
            done = point.terminations[agent] or point.truncations[agent]
            for other in point.agents:
                if other != agent or done:
                    assert not point.observe(other)["action_mask"].any(), f"{other} has a mask but is not to act"
            for a in point.agents:
                assert np.isfinite(point._cumulative_rewards[a]), "non-finite reward"
            steps += 1
            assert steps <= max_steps, f"{point}: game seed {seed + g} did not end within {max_steps} steps"
        report.games += 1
        report.steps += steps
        report.longest = max(report.longest, steps)
        report.truncated += bool(env.final_outcome and env.final_outcome.get("truncated"))
    return report


def _trace(env: ParlourEnv[Any], actions: Iterator[int | None]) -> list[tuple[Any, ...]]:
    trace: list[tuple[Any, ...]] = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        trace.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc))
        env.step(next(actions))
    return trace


def replay_check(env_fn: EnvFactory, *, seed: int = 0) -> dict[str, Any]:
    """Play a random game, round-trip its record through JSON, replay it, and compare everything."""
    from parlour.envs import make, replay

    env = env_fn()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def random_actions() -> Iterator[int | None]:
        while True:
            yield _random_action(env, rng)

    original = _trace(env, random_actions())
    record = json.loads(json.dumps(env.record()))
    assert record["outcome"] is not None, "a finished game's record has no outcome"
    replayed = replay(record)
    assert replayed.record()["outcome"] == record["outcome"], "replay: the outcome differs"

    again = make(record["env"], **record["options"])
    again.reset(options={"game_seed": record["game_seed"]})
    steps = iter(record["actions"])

    def recorded_actions() -> Iterator[int | None]:
        while True:
            agent = again.agent_selection
            if again.terminations[agent] or again.truncations[agent]:
                yield None
            else:
                yield int(next(steps)["action"])

    assert _trace(again, recorded_actions()) == original, "replay: observations or rewards differ"
    return record


def copy_check(env_fn: EnvFactory, *, seed: int = 0, steps: int = 20) -> int:
    """Play ``steps`` random steps, then a pickled copy and a ``clone()`` must go on exactly like the original
    (same agents, observations, masks, rewards and ends) under the same actions. Returns the steps compared."""
    import pickle

    env = env_fn()
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in range(steps):
        if env.game_over:
            break
        env.step(_random_action(env, rng))
    copies = [pickle.loads(pickle.dumps(env)), env.clone()]
    compared = 0
    for agent in env.agent_iter():
        a = env.last()
        action = _random_action(env, rng)
        for copy in copies:
            b = copy.last()
            assert agent == copy.agent_selection, f"{env}: a copy has {copy.agent_selection} to act, not {agent}"
            assert np.array_equal(a[0]["observation"], b[0]["observation"]), f"{env}: a copy observes differently"
            assert np.array_equal(a[0]["action_mask"], b[0]["action_mask"]) and a[1:4] == b[1:4]
            copy.step(action)
        env.step(action)
        compared += 1
    return compared

"""The belief probe: deduction measured against the truth. At chosen decisions a language agent is also asked for the
hidden fact its game turns on -- 6 Suspects' culprit, Lady Alice's solution, Elevenses' Murderer -- as a probability
for each possibility, and its answer is scored against what was true and against the exact posterior of the seat's
view where the game has one. It separates "cannot deduce" from "cannot act on it": an agent that loses while its
beliefs match the posterior plays badly; one whose beliefs are far from it does not know what its view shows.

Each possibility is a proposition that is true or false (suspect X is a culprit; clue c is in the solution; the
Guilt card at position x is a Murderer), and an answer's score is the mean Bernoulli log score over them, each stated
probability held in [:data:`FLOOR`, 1 - :data:`FLOOR`] (a log score punishes a confident miss without limit; the floor
keeps one answer from outweighing a whole run). The posterior's own score beside it is the most a seat could expect
from its view; calibration is the expected calibration error of the stated probabilities over ten equal bins.

| game | question | posterior |
|---|---|---|
| 6 Suspects | each suspect: is it a culprit? | exact over every card layout consistent with the cards the seat saw (a fixed 1,000-layout sample when more are consistent: :func:`parlour.envs.six_suspects.rules.culprit_probabilities`) |
| Lady Alice | each clue: is it in the solution? | exact over the solutions consistent with the seat's evidence card and every verdict (:func:`parlour.baselines.lady_alice.solution_probabilities`) |
| Elevenses | each Guilt card (each seat's, Mrs Lansdowne's): is it a Murderer? | none: claims may be lies and plates are moved by strategy, so no exact posterior exists; scored against the truth only |

Goes to Eleven has no hidden fact the game turns on (its end reveals nothing that decides it), so it has no probe.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from parlour.envs.core import ParlourEnv

#: The least and (one minus) the most probability an answer's proposition is scored at.
FLOOR = 0.01
#: Calibration bins (equal widths over [0, 1]).
BINS = 10


@dataclass(frozen=True)
class Probe:
    """One game's question: its propositions, how to read their truth (hidden: used only to score an answer, after
    it is given) and the seat's exact posterior where the game has one (a function of its view)."""

    question: str
    options: tuple[str, ...]
    truth: Callable[[ParlourEnv[Any], str], np.ndarray]
    posterior: Callable[[ParlourEnv[Any], str], np.ndarray] | None


def _six_suspects(env: ParlourEnv[Any]) -> Probe:
    from parlour.baselines.six_suspects import known_cards
    from parlour.envs.six_suspects import rules

    values = env.rules_options.plain_values

    def truth(e: ParlourEnv[Any], agent: str) -> np.ndarray:
        culprits = rules.resolve(e.game.layout, values).culprits
        return np.isin(np.arange(rules.NUM_SUSPECTS), culprits)

    def posterior(e: ParlourEnv[Any], agent: str) -> np.ndarray:
        return rules.culprit_probabilities(known_cards(e.observe(agent)["observation"]), values)

    return Probe("For each suspect: how likely is it that this suspect is a culprit of this game?", rules.SUSPECTS,
                 truth, posterior)  # fmt: skip


def _lady_alice(env: ParlourEnv[Any]) -> Probe:
    from parlour.baselines.lady_alice import decode, solution_probabilities
    from parlour.envs.lady_alice import rules

    def truth(e: ParlourEnv[Any], agent: str) -> np.ndarray:
        return np.isin(np.arange(rules.NUM_CLUES), e.game.solution)

    def posterior(e: ParlourEnv[Any], agent: str) -> np.ndarray:
        return solution_probabilities(decode(e.observe(agent)["observation"]))[1]

    names = tuple(rules.clue_name(c) for c in range(rules.NUM_CLUES))
    return Probe("For each clue: how likely is it that this clue is part of the solution?", names, truth, posterior)


def _elevenses(env: ParlourEnv[Any]) -> Probe:
    n = env.num_players
    names = (*env.possible_agents, "Mrs Lansdowne")

    def truth(e: ParlourEnv[Any], agent: str) -> np.ndarray:
        return np.asarray(e.game.guilt[: n + 1], bool)

    return Probe("For each Guilt card (each player's, and Mrs Lansdowne's): how likely is it that it is a Murderer "
                 "card?", names, truth, None)  # fmt: skip


PROBES: dict[str, Callable[[ParlourEnv[Any]], Probe]] = {
    "six_suspects": _six_suspects,
    "lady_alice": _lady_alice,
    "elevenses": _elevenses,
}


def probe_for(env: ParlourEnv[Any]) -> Probe:
    """The probe of ``env``'s game (``ValueError`` naming the games that have one, for a game without)."""
    from parlour.baselines import game_name

    game = game_name(env.metadata["name"])
    if game not in PROBES:
        raise ValueError(f"{env.metadata['name']} has no belief probe (nothing hidden decides it); games with one: "
                         f"{sorted(PROBES)}")  # fmt: skip
    return PROBES[game](env)


def probe_prompt(env: ParlourEnv[Any], agent: str, probe: Probe, reason: str | None = None) -> str:
    """The question put to ``agent``: its view, the question, the answer format (a function of what it knows)."""
    lines = [
        f"You are {agent} in a game of {env.title} ({env.num_players} players).",
        "",
        "What you see now:",
        env.render_text(perspective=agent),
        "",
        f"A question about the game (your answer does not change it): {probe.question}",
        "Answer with one line for each of the following, NAME: PROBABILITY% (a number from 0 to 100), and nothing else:",
        *probe.options,
    ]
    if reason is not None:
        lines += ["", f"Your previous answer was not accepted: {reason}. Answer again."]
    return "\n".join(lines)


def read_probabilities(text: Any, options: tuple[str, ...]) -> tuple[np.ndarray | None, str]:
    """The probabilities an answer gives, in the order of ``options`` (``NAME: P%`` or ``NAME: 0.P`` lines, case and
    spacing aside), or ``None`` and why it was refused: a missing option, a number outside [0, 100] %."""
    if not isinstance(text, str):
        return None, f"an answer is text, not {type(text).__name__}"
    found: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r"\s*[-*]?\s*(.+?)\s*[:=]\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$", line)
        if m:
            value = float(m[2]) / 100 if m[3] or float(m[2]) > 1 else float(m[2])
            found[" ".join(m[1].strip("*`\"' ").casefold().split())] = value
    out = []
    for name in options:
        key = " ".join(name.casefold().split())
        if key not in found:
            return None, f"no probability for {name!r}"
        if not 0.0 <= found[key] <= 1.0:
            return None, f"{name}: {found[key] * 100:g}% is not a probability (0-100%)"
        out.append(found[key])
    return np.asarray(out), ""


def log_score(q: np.ndarray, truth: np.ndarray) -> float:
    """The mean Bernoulli log score (natural log; higher is better, 0 is perfect) of probabilities ``q`` for the
    propositions whose truth is ``truth``, each ``q`` held in [FLOOR, 1 - FLOOR]."""
    q = np.clip(np.asarray(q, float), FLOOR, 1 - FLOOR)
    t = np.asarray(truth, bool)
    return float(np.mean(np.where(t, np.log(q), np.log1p(-q))))


def calibration(q: np.ndarray, truth: np.ndarray, bins: int = BINS) -> dict[str, Any]:
    """The expected calibration error of stated probabilities ``q`` against what was true (``truth``), over ``bins``
    equal-width bins: the bins' mean |stated - observed frequency|, weighted by their share of the answers; with each
    bin's count, mean stated probability and observed frequency."""
    q, t = np.asarray(q, float).ravel(), np.asarray(truth, float).ravel()
    which = np.minimum((q * bins).astype(int), bins - 1)
    rows, ece = [], 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            stated, seen = float(q[inside].mean()), float(t[inside].mean())
            ece += inside.mean() * abs(stated - seen)
            rows.append({"bin": [b / bins, (b + 1) / bins], "count": int(inside.sum()), "stated": stated, "true": seen})
    return {"ece": float(ece), "bins": rows, "method": f"expected calibration error over {bins} equal-width bins"}


def score(env: ParlourEnv[Any], agent: str, probe: Probe, q: np.ndarray) -> dict[str, Any]:
    """An accepted answer scored: the truth, the posterior (where the game has one) and both log scores."""
    truth = probe.truth(env, agent)
    out: dict[str, Any] = {"stated": q.tolist(), "truth": truth.astype(int).tolist(), "log_score": log_score(q, truth)}
    if probe.posterior is not None:
        p = probe.posterior(env, agent)
        out |= {"posterior": [float(x) for x in p], "posterior_log_score": log_score(p, truth)}
    return out


def summary(answers: list[dict[str, Any]], asked: int) -> dict[str, Any]:
    """A run's probe answers (each :func:`score`'s ``stated``, ``truth``, ``log_score`` and, where the game has one,
    ``posterior_log_score``) summarised: the mean log scores of the agent and of the posterior on the same questions,
    and the agent's calibration."""
    out: dict[str, Any] = {"asked": asked, "scored": len(answers)}
    if not answers:
        return out
    out["log_score"] = float(np.mean([a["log_score"] for a in answers]))
    paired = [a for a in answers if "posterior_log_score" in a]
    if paired:
        out["paired"] = len(paired)
        out["agent_log_score_paired"] = float(np.mean([a["log_score"] for a in paired]))
        out["posterior_log_score"] = float(np.mean([a["posterior_log_score"] for a in paired]))
    stated = np.concatenate([np.asarray(a["stated"], float) for a in answers])
    truth = np.concatenate([np.asarray(a["truth"], float) for a in answers])
    out["calibration"] = calibration(stated, truth)
    out["method"] = (
        f"mean over answers of the mean Bernoulli log score over each answer's propositions (natural log, "
        f"probabilities held in [{FLOOR}, {1 - FLOOR}]); the posterior's on the same answers; {out['calibration']['method']}"
    )
    return out

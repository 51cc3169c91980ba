"""Play a game yourself against bots or trained policies (``parlour play``) and step through a saved game
(``parlour replay``), in the terminal.

Both show a seat only what that seat can know: the table through ``render_text(perspective)``, and another
seat's moves only as "moved" (a move's text can name what the mover alone knows -- which card it looked at, which
counter it placed). A replay shows everything only when asked (``god=True``). Input and output go through two
callables, ``ask(prompt) -> str`` and ``say(text)``, so that a test can drive a game through them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import available, resolve
from parlour.baselines.base import Policy
from parlour.baselines.match import save_record
from parlour.envs import ENVIRONMENTS, make, replay
from parlour.envs.core import ParlourEnv

Ask = Callable[[str], str]
Say = Callable[[str], None]

#: What ``parlour play`` answers to ``?``.
PLAY_HELP = (
    "Type the number of a legal action, or words from its name (e.g. 'peek albert top'): the action whose name "
    "holds every word, as the start of a word, is played. '?' shows the actions again, 'q' quits (the game so far "
    "is saved)."
)
#: What ``parlour replay`` answers to ``?``.
REPLAY_HELP = (
    "Enter or 'n': next move; 'b': back one move; 'd': the next decision of the seat you watch; a number: go to "
    "that move; 'q': quit."
)


class QuitGame(Exception):  # noqa: N818 - a request, not an error
    """The person at the table asked to stop."""


def default_opponent(env_name: str) -> str:
    """The opponent ``parlour play`` seats by default: the game's heuristic bot (random if it has none)."""
    return next((n for n in available(env_name) if n.endswith("_heuristic")), "random")


def legal_listing(env: ParlourEnv[Any], legal: Sequence[int]) -> str:
    return "\n".join(f"  [{a}] {env.decode_action(a)}" for a in legal)


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text.lower())


def parse_choice(env: ParlourEnv[Any], legal: Sequence[int], text: str) -> tuple[int | None, str]:
    """The legal action ``text`` names (a number, or words of its name), or ``None`` and what to tell the player."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        action = int(text)
        if action in legal:
            return action, ""
        return None, f"{action} is not a legal action now; choose one of {list(legal)} ('?' lists them)"
    typed = _words(text)
    if not typed:
        return None, "type a number or words from an action's name ('?' for help)"
    matches = [a for a in legal if all(any(w.startswith(t) for w in _words(env.decode_action(a))) for t in typed)]
    if len(matches) == 1:
        return matches[0], ""
    if not matches:
        return None, f"no legal action matches {text!r} ('?' lists them)"
    return None, f"{text!r} matches {len(matches)} actions; be more specific:\n" + legal_listing(env, matches)


def _human_move(env: ParlourEnv[Any], agent: str, ask: Ask, say: Say) -> int:
    legal = env.legal_actions(agent)
    say(env.render_text(perspective=agent))
    say(f"\nYour move, {agent}. Legal actions:\n" + legal_listing(env, legal))
    while True:
        answer = ask("> ")
        if answer.strip().lower() in ("q", "quit", "exit"):
            raise QuitGame
        if answer.strip() in ("?", "h", "help"):
            say(PLAY_HELP + "\n" + legal_listing(env, legal))
            continue
        action, problem = parse_choice(env, legal, answer)
        if action is not None:
            return action
        say(problem)


def play_game_with_person(
    env_name: str,
    *,
    num_players: int | None = None,
    seat: int | None = None,
    opponents: Sequence[str] = (),
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    record_path: Path | None = None,
    ask: Ask = input,
    say: Say = print,
    trust_pickle: bool = False,
) -> dict[str, Any]:
    """A person takes ``seat`` (drawn if ``None``) against ``opponents`` (policy specs, one per other seat or one
    for all; default the game's heuristic bot). Returns the game record, which is saved to ``record_path``."""
    if env_name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {env_name!r}; available: {sorted(ENVIRONMENTS)}")
    kwargs = dict(options or {})
    if num_players is not None:
        kwargs["num_players"] = num_players
    env = make(env_name, **kwargs)
    n = env.num_players
    seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed  # printed: replayable
    rng = np.random.default_rng(seed)
    if seat is None:
        seat = int(rng.integers(n))
    elif not 0 <= seat < n:
        raise ValueError(f"--seat {seat} is out of range: expected a seat in [0, {n - 1}]")
    specs = list(opponents) or [default_opponent(env_name)]
    if len(specs) not in (1, n - 1):
        raise ValueError(f"give one opponent for every other seat ({n - 1}) or one for all; got {len(specs)}")
    rules = {k: v for k, v in kwargs.items() if k != "num_players"}
    policies: dict[str, Policy] = {}
    for spec in specs:  # each spec resolved once, checked against this table
        policies.setdefault(spec, resolve(spec, env_name, n, rules, trust_pickle=trust_pickle))
    others = [s for s in range(n) if s != seat]
    seats: list[Policy | None] = [None] * n
    for i, s in enumerate(others):
        seats[s] = policies[specs[i if len(specs) > 1 else 0]]
    env.reset(seed=seed)
    me = env.possible_agents[seat]
    names = ["you" if p is None else p.name for p in seats]
    say(
        f"{env_name}, {n} players, seed {seed}. You are {me}; "
        + ", ".join(f"{env.possible_agents[s]}: {names[s]}" for s in others)
        + ". '?' for help."
    )
    quit_early = False
    try:
        for agent in env.agent_iter():
            _, _, term, trunc, _ = env.last(observe=False)
            if term or trunc:
                env.step(None)
                continue
            s = env.possible_agents.index(agent)
            policy = seats[s]
            if policy is None:
                env.step(_human_move(env, agent, ask, say))
                continue
            action = policy.act_with_env(env, agent, rng)  # observes and acts, unless the policy needs more
            env.step(action)
            say(f"{agent} ({policy.name}) moved.")  # not what: its move's text may be private
    except (QuitGame, EOFError):
        quit_early = True
        say("\nGame stopped.")
    record = env.record() | {"players": names, "human_seat": seat}
    if not quit_early:
        outcome = record["outcome"] or {}
        say("\nThe game is over. The whole table:\n" + env.render_text())
        winners = [env.possible_agents[w] for w in outcome.get("winners", [])]
        say(f"Winners: {', '.join(winners) or 'nobody'}" + (" (you won)" if seat in outcome.get("winners", []) else ""))
        if "scores" in outcome:
            say(
                "Scores: " + ", ".join(f"{a} {x}" for a, x in zip(env.possible_agents, outcome["scores"], strict=False))
            )
    if record_path is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        record_path = Path("records") / f"{env_name}_play_{stamp}_seed{seed}.json"
    save_record(env, record_path, names, {"human_seat": seat})
    say(f"Game record saved to {record_path} (parlour replay {record_path})")
    return record


# ----------------------------------------------------------------------------------------------- replay
def load_record(path: Path) -> dict[str, Any]:
    """A saved game record, checked to reproduce (every action legal, the same outcome)."""
    try:
        record: dict[str, Any] = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"no record at {path}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not a game record (not JSON: {exc})") from None
    if not isinstance(record, dict) or record.get("format") != "parlour-record/1":
        raise ValueError(f"{path} is not a game record (expected format 'parlour-record/1')")
    replay(record)  # raises if the record does not reproduce
    return record


def positions(record: dict[str, Any]) -> list[ParlourEnv[Any]]:
    """The game before each move and after the last: ``len(actions) + 1`` copies."""
    env = make(record["env"], **record["options"])
    env.reset(options={"game_seed": int(record["game_seed"])})
    out = [env.clone()]
    for step in record["actions"]:
        env.step(int(step["action"]))
        out.append(env.clone())
    return out


def describe(record: dict[str, Any], states: Sequence[ParlourEnv[Any]], k: int, perspective: str | None) -> str:
    """Move ``k``: the table as ``perspective`` saw it (everything when ``None``) and the move made, shown only if
    that seat may know it (its own move, or any move in the god view)."""
    actions = record["actions"]
    players = record.get("players") or []
    env = states[k]
    lines = [f"--- move {k + 1} of {len(actions)} ---" if k < len(actions) else "--- the end ---"]
    lines.append(env.render_text(perspective=perspective))
    if k < len(actions):
        step = actions[k]
        who = step["agent"] + (f" ({players[step['seat']]})" if step["seat"] < len(players) else "")
        if perspective is None or step["agent"] == perspective:
            legal = env.legal_actions()
            lines.append(f"{who} chose [{step['action']}] {step['text']}, from {len(legal)} legal actions")
        else:
            lines.append(f"{who} moves")
    else:
        outcome = record.get("outcome") or {}
        winners = [f"player_{w}" for w in outcome.get("winners", [])]
        lines.append(f"Winners: {', '.join(winners) or 'nobody'}")
    return "\n".join(lines)


def replay_game(
    path: Path, *, perspective: str | None = None, god: bool = False, ask: Ask = input, say: Say = print
) -> None:
    """Step through a saved game, forward and back, as ``perspective`` saw it (default: the person's seat in a
    record of ``parlour play``, else ``player_0``), or everything with ``god``."""
    record = load_record(path)
    n = int(record["options"]["num_players"])
    if perspective is None and not god:
        perspective = f"player_{record.get('human_seat', 0)}"
    if perspective is not None and perspective not in [f"player_{i}" for i in range(n)]:
        raise ValueError(
            f"--perspective {perspective!r} is not a seat of this game: expected player_0 .. player_{n - 1}"
        )
    view = None if god else perspective
    states = positions(record)
    last = len(states) - 1
    say(
        f"{record['env']}, {n} players, seed {record['game_seed']}, {last} moves; "
        + ("the whole table (god view)" if view is None else f"as {view} saw it")
        + ". '?' for help."
    )
    k = 0
    while True:
        say(describe(record, states, k, view))
        try:
            answer = ask("> ").strip().lower()
        except EOFError:
            return
        if answer in ("q", "quit", "exit"):
            return
        if answer in ("?", "h", "help"):
            say(REPLAY_HELP)
        elif answer in ("", "n"):
            if k == last:
                return
            k += 1
        elif answer == "b":
            k = max(0, k - 1)
        elif answer == "d":
            mine = [i for i in range(k + 1, last) if view is None or record["actions"][i]["agent"] == view]
            k = mine[0] if mine else last
        elif answer.isdigit() and 1 <= int(answer) <= last + 1:
            k = int(answer) - 1
        else:
            say(f"not a command: {answer!r}. " + REPLAY_HELP)

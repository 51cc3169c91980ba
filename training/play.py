"""Play a game yourself against bots or trained policies (``parlour play``) and step through a saved game
(``parlour replay``), in the terminal.

Both show a seat only what that seat can know: the table through ``render_text(perspective)``, and another
seat's moves only as "moved" (a move's text can name what the mover alone knows -- which card it looked at, which
counter it placed). A replay shows everything only when asked (``god=True``). Input and output go through two
callables, ``ask(prompt) -> str`` and ``say(text)``, so that a test can drive a game through them.

``parlour play`` keeps the deal's seed to itself until the game is over: the seed rebuilds every hidden card. A
replay trusts nothing in its file: :func:`parlour.envs.replay` checks the record's fields and recomputes each move's
seat, agent and text, and whatever of the file is printed goes through :func:`shown` (control characters escaped).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from parlour.baselines import available, resolve
from parlour.baselines.base import Policy
from parlour.envs import ENVIRONMENTS, MAX_GAME_SEED, RECORD_FORMAT, check_record, make, replay
from parlour.envs.core import ParlourEnv
from parlour.envs.fileio import FileSafetyError, read_json
from parlour.training.evaluation.games import save_record

Ask = Callable[[str], str]
Say = Callable[[str], None]
#: A person's name in a game record (``players``): who played, not "you", which would be wrong for whoever replays
#: the game from another seat.
PERSON = "person"


def console_ask() -> Ask:
    """How to ask the person at the console: ``input`` at a terminal; from a pipe, the prompt written and flushed
    *before* the line is read (a script waits for ``> `` before it answers), then the answer echoed after it, so the
    transcript reads ``> answer`` on a line of its own as at a terminal."""
    import sys

    if sys.stdin.isatty():
        return input  # input() flushes stdout and writes the prompt before it reads

    def ask(prompt: str) -> str:
        print(prompt, end="", flush=True)  # everything said so far, then the prompt, reaches the reader now
        line = sys.stdin.readline()
        if not line:
            print(flush=True)  # end the prompt's line: what follows starts on a line of its own
            raise EOFError
        answer = line.rstrip("\r\n")
        print(shown(answer), flush=True)  # the echo: what was read, escaped like everything else printed
        return answer

    return ask


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, made plural unless ``count`` is 1: ``1 card``, ``2 cards``, ``0 moves``."""
    return f"{count} {word if count == 1 else many or word + 's'}"


#: What ``parlour play`` answers to ``?``.
PLAY_HELP = (
    "Type a move's number as listed (1 for the first, 2 for the second, ...) or its name as listed: case and spacing "
    "do not matter, and the start of each word is enough when only one legal move fits (e.g. 'peek albert top'). A "
    "bare number is always a list position; '#N' plays the move whose action id is N (the id that game records and "
    "the Python API use, shown as (#N) in the list below). '?' shows this again, 'q' stops the game (what was played "
    "is saved)."
)
#: What ``parlour replay`` answers to ``?``.
REPLAY_HELP = (
    "Enter or 'n': next move; 'b': back one move; 'd': the next decision of the seat you watch; a number: go to "
    "that move; 'q': quit."
)


def shown(value: object) -> str:
    """``value`` as text that is safe to print: every character that is not printable (terminal escape sequences,
    other control characters, line breaks, bidirectional overrides) is shown as its Python escape (``\\x1b``)."""
    text = str(value)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        else:
            o = ord(ch)
            named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(ch)
            out.append(named or (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"))
    return "".join(out)


class QuitGame(Exception):  # noqa: N818 - a request, not an error
    """The person at the table asked to stop."""


def default_opponent(env_name: str) -> str:
    """The opponent ``parlour play`` seats by default: the game's heuristic bot (random if it has none)."""
    return next((n for n in available(env_name) if n.endswith("_heuristic")), "random")


def legal_listing(env: ParlourEnv[Any], legal: Sequence[int], *, ids: bool = False) -> str:
    """The legal moves numbered by list position (what the person types), with their action ids if ``ids``."""
    names = env.unwrapped.action_names
    return "\n".join(f"  [{i}] {names[a]}" + (f"  (#{a})" if ids else "") for i, a in enumerate(legal, 1))


def _numbers(legal: Sequence[int]) -> str:
    return "1" if len(legal) == 1 else f"a number from 1 to {len(legal)}"


def _allowed(legal: Sequence[int]) -> str:
    """What the person may type, in a few words: the end of every complaint about an entry."""
    return f"type {_numbers(legal)} or a listed move's name ('?' for help)"


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text.casefold())


def _by_number(legal: Sequence[int], text: str) -> tuple[int | None, str] | None:
    """``text`` as a list position (``3``) or an action id (``#140``); ``None`` if it is neither."""
    found = re.fullmatch(r"(#?)\s*([+-]?[0-9]+)", text)  # ASCII digits only: int() takes others, isdigit() more
    if found is None:
        return None
    if len(found[2]) > 20:  # int() refuses a few thousand digits; nothing this long is on any list
        return None, f"{text[:20]}... is not on the list; {_allowed(legal)}"
    number = int(found[2])
    if found[1]:  # '#N': an action id, as records and the Python API give it
        if number in legal:
            return number, ""
        return None, f"#{number} is not the id of a legal move now; {_allowed(legal)}"
    if 1 <= number <= len(legal):  # a bare number is a list position, even where it is also a legal action id
        return legal[number - 1], ""
    return None, f"{number} is not on the list; {_allowed(legal)}"


def parse_choice(env: ParlourEnv[Any], legal: Sequence[int], text: str) -> tuple[int | None, str]:
    """The legal action ``text`` names, or ``None`` and one line telling the player what was wrong and what is
    allowed. ``text`` is a list position (1-based, as listed), ``#`` and an action id, a move's whole name (case and
    spacing aside: :meth:`~parlour.envs.core.ParlourEnv.parse_action`), or the starts of its name's words when only
    one legal move fits them."""
    text = text.strip()
    if not text:
        return None, f"Nothing typed; {_allowed(legal)}"
    numbered = _by_number(legal, text)
    if numbered is not None:
        return numbered
    raw = env.unwrapped
    try:
        action = raw.parse_action(text)
    except ValueError:
        action = None  # not a whole name: perhaps the starts of a name's words
    if action is not None:
        if action in legal:
            return action, ""
        return None, f"{raw.action_names[action]!r} is not a legal move now; {_allowed(legal)}"
    typed = _words(text)
    fits = [a for a in legal if typed and all(any(w.startswith(t) for w in _words(raw.action_names[a])) for t in typed)]
    if len(fits) == 1:
        return fits[0], ""
    if fits:
        where = ", ".join(str(legal.index(a) + 1) for a in fits)
        return None, (
            f"{text!r} fits {len(fits)} legal moves ({where} on the list); type more of the name, or its number"
        )
    return None, f"{text!r} names no legal move; {_allowed(legal)}"


def _human_move(env: ParlourEnv[Any], agent: str, ask: Ask, say: Say) -> int:
    legal = env.legal_actions(agent)
    say(env.render_text(perspective=agent))
    say(f"\nYour move, {agent}. Legal actions:\n" + legal_listing(env, legal))
    say(f"Type {_numbers(legal)} (a place on the list) or a move's name; '?' for help, 'q' to stop.")
    while True:
        answer = ask("> ")
        if answer.strip().casefold() in ("q", "quit", "exit"):
            raise QuitGame
        if answer.strip().casefold() in ("?", "h", "help"):
            say(PLAY_HELP + "\nLegal actions:\n" + legal_listing(env, legal, ids=True))
            continue
        action, problem = parse_choice(env, legal, answer)
        if action is not None:
            return action
        say(problem)


def _free_name(path: Path) -> Path:
    """``path``, or the first of ``NAME_2.json``, ``NAME_3.json``, ... beside it that nothing occupies (no file,
    folder or link)."""
    candidate, k = path, 1
    while os.path.lexists(candidate):
        k += 1
        candidate = path.with_name(f"{path.stem}_{k}{path.suffix}")
    return candidate


def _check_folder(path: Path, what: str) -> None:
    """Refuse, before the game, a record path whose folder cannot be made or written (a file in the way, no
    permission): the game's record would be lost at the end. ``what`` names the path in the message."""
    for folder in path.parents:
        if os.path.lexists(folder):
            if not folder.is_dir():
                raise ValueError(f"{what}: {shown(folder)} is not a folder")
            if not os.access(folder, os.W_OK | os.X_OK):
                raise ValueError(f"{what}: cannot write in the folder {shown(folder)}")
            return


def record_path_for(
    env_name: str, seed: int, record_path: Path | None = None, *, overwrite: bool = False
) -> tuple[Path, bool]:
    """Where ``parlour play`` will save its record, checked before the game starts, and whether it may replace a
    file there. ``record_path`` (``--record``): refused if it is a folder, or if something is there already and
    not ``overwrite``. Default: ``records/<env>_play_<time>_seed<seed>.json``, with ``_2``, ``_3``, ... added if
    taken; never overwritten. Messages never name the default path, whose name holds the deal's seed."""
    if record_path is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        folder = Path("records")
        _check_folder(folder / "record.json", f"cannot save the game record in {folder}")
        return _free_name(folder / f"{env_name}_play_{stamp}_seed{seed}.json"), False
    what = f"--record {shown(record_path)}"
    if record_path.is_dir():
        raise ValueError(f"{what} is a folder; give the name of a file to write the game record to")
    if os.path.lexists(record_path) and not overwrite:
        raise ValueError(f"{what} exists already; pass --overwrite to replace it, or choose another path")
    _check_folder(record_path, what)
    return record_path, overwrite


def _save(env: ParlourEnv[Any], path: Path, names: list[str], seat: int, overwrite: bool, say: Say) -> Path:
    """Save the record to ``path``; if something took that name during the game (and not ``overwrite``), to a free
    name beside it instead. Returns where it went."""
    try:
        try:
            return save_record(env, path, names, {"human_seat": seat}, overwrite=overwrite)
        except FileSafetyError:
            if overwrite:
                raise
            free = _free_name(path)
            say(f"{shown(path)} appeared during the game; it is left alone.")
            return save_record(env, free, names, {"human_seat": seat}, overwrite=False)
    except OSError as exc:
        raise ValueError(f"could not save the game record to {shown(path)}: {exc.strerror or exc}") from None


def play_game_with_person(
    env_name: str,
    *,
    num_players: int | None = None,
    seat: int | None = None,
    opponents: Sequence[str] = (),
    seed: int | None = None,
    options: dict[str, Any] | None = None,
    record_path: Path | None = None,
    overwrite: bool = False,
    ask: Ask = input,
    say: Say = print,
    trust_pickle: bool = False,
) -> dict[str, Any]:
    """A person takes ``seat`` (drawn if ``None``) against ``opponents`` (policy specs, one per other seat or one
    for all; default the game's heuristic bot). Returns the game record, which is saved to ``record_path`` (see
    :func:`record_path_for`: an existing file is replaced only with ``overwrite``).

    The seed (drawn if ``None``) is the deal's game seed: the record's ``game_seed``, the seed ``parlour replay``
    shows, and what ``--seed`` takes to deal the game again. It deals the cards, so it is shown only once the game is
    over."""
    if env_name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {env_name!r}; available: {sorted(ENVIRONMENTS)}")
    kwargs = dict(options or {})
    if num_players is not None:
        kwargs["num_players"] = num_players
    env = make(env_name, **kwargs)
    n = env.num_players
    seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed  # shown when the game is over
    if not 0 <= seed <= MAX_GAME_SEED:
        raise ValueError(f"--seed {seed} is out of range: expected an integer in [0, 2**63 - 2]")
    # the seat and the bots' choices draw from a stream of their own, apart from the deal's (default_rng(seed)): a
    # random bot's moves must not be a function of the hidden cards
    rng = np.random.default_rng([seed, 1])
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
    record_path, overwrite = record_path_for(env_name, seed, record_path, overwrite=overwrite)  # before the game
    env.reset(options={"game_seed": seed})  # one seed: the one announced at the end is the record's game_seed
    me = env.possible_agents[seat]
    names = [PERSON if p is None else p.name for p in seats]
    say(  # no seed: it would tell the whole deal
        f"{env_name}, {plural(n, 'player')}. You are {me}; "
        + ", ".join(f"{env.possible_agents[s]}: {shown(names[s])}" for s in others)  # names: from policy files
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
            say(f"{agent} ({shown(policy.name)}) moved.")  # not what: its move's text may be private
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
    # the game is over: no secret now. The record's game_seed and the replay's header show this same number
    say(f"The deal's seed was {seed} (--seed {seed} deals this game again; its record keeps it as game_seed).")
    record_path = _save(env, record_path, names, seat, overwrite, say)
    say(f"Game record saved to {shown(record_path)} (parlour replay {shown(record_path)})")
    return record


# ----------------------------------------------------------------------------------------------- replay
def load_record(path: Path) -> dict[str, Any]:
    """A saved game record, checked to reproduce (:func:`parlour.envs.replay`: every field of the right type, every
    action legal, every move's seat, agent and text the game's, the same outcome). Raises ``ValueError``: one line
    that names the file (and the field), with control characters escaped."""
    try:
        record = read_json(path, "game record")
        if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
            raise ValueError(f"{path} is not a game record (expected format {RECORD_FORMAT!r})")
        replay(record)  # raises if the record is malformed or does not reproduce
    except ValueError as exc:
        message = str(exc).removeprefix("replay: ")
        if str(path) not in message:
            message = f"{path}: {message}"
        raise ValueError(shown(message)) from None
    return record


def positions(record: dict[str, Any]) -> list[ParlourEnv[Any]]:
    """The game before each move and after the last: ``len(actions) + 1`` copies."""
    env = check_record(record)
    env.reset(options={"game_seed": int(record["game_seed"])})
    out = [env.clone()]
    for step in record["actions"]:
        env.step(int(step["action"]))
        out.append(env.clone())
    return out


def _player_name(record: dict[str, Any], seat: int, agent: str, perspective: str | None) -> str:
    """The record's name of ``seat``; the person who played is "you" only to a replay from their own seat (records
    of earlier releases call them "you" whoever watches)."""
    name = str(record["players"][seat])
    if "human_seat" in record and seat == int(record["human_seat"]):
        return "you" if agent == perspective else PERSON
    return name


def describe(record: dict[str, Any], states: Sequence[ParlourEnv[Any]], k: int, perspective: str | None) -> str:
    """Move ``k``: the table as ``perspective`` saw it (everything when ``None``) and the move made, shown only if
    that seat may know it (its own move, or any move in the god view). Who moved and what the move was are the
    game's (``states``), not the file's; the players' names from the file are shown escaped."""
    actions = record["actions"]
    players = record.get("players") or []
    env = states[k]
    lines = [f"--- move {k + 1} of {len(actions)} ---" if k < len(actions) else "--- the end ---"]
    lines.append("\n".join(map(shown, env.render_text(perspective=perspective).split("\n"))))  # options: from the file
    if k < len(actions):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        action = int(actions[k]["action"])
        who = agent + (f" ({shown(_player_name(record, seat, agent, perspective))})" if seat < len(players) else "")
        if perspective is None or agent == perspective:
            legal = env.legal_actions()
            lines.append(
                f"{who} chose [{action}] {env.decode_action(action)}, from {plural(len(legal), 'legal action')}"
            )
        else:
            lines.append(f"{who} moves")
    else:
        outcome = env.final_outcome or {}
        winners = [env.possible_agents[w] for w in outcome.get("winners", [])]
        lines.append(f"Winners: {', '.join(winners) or 'nobody'}")
    return "\n".join(lines)


def replay_game(
    path: Path, *, perspective: str | None = None, god: bool = False, ask: Ask = input, say: Say = print
) -> None:
    """Step through a saved game, forward and back, as ``perspective`` saw it (default: the person's seat in a
    record of ``parlour play``, else ``player_0``), or everything with ``god``."""
    record = load_record(path)
    states = positions(record)
    agents = states[0].possible_agents
    n = len(agents)
    if perspective is None and not god:
        perspective = agents[int(record.get("human_seat", 0))]
    if perspective is not None and perspective not in agents:
        raise ValueError(
            f"--perspective {perspective!r} is not a seat of this game: expected player_0 .. player_{n - 1}"
        )
    view = None if god else perspective
    last = len(states) - 1
    say(
        f"{shown(record['env'])}, {plural(n, 'player')}, seed {int(record['game_seed'])}, {plural(last, 'move')}; "
        + ("the whole table (god view)" if view is None else f"as {view} saw it")
        + ". '?' for help."
    )
    k: int | None = 0
    while k is not None:
        say(describe(record, states, k, view))
        try:
            answer = ask("> ").strip().casefold()
        except EOFError:
            return
        k, problem = _replay_command(answer, k, states, view)
        if problem:
            say(problem)


def _replay_command(answer: str, k: int, states: Sequence[ParlourEnv[Any]], view: str | None) -> tuple[int | None, str]:
    """Where the replay goes after ``answer`` at position ``k`` (``None``: it ends), and what to tell the watcher."""
    last = len(states) - 1
    if answer in ("q", "quit", "exit") or (answer in ("", "n") and k == last):
        return None, ""
    if answer in ("?", "h", "help"):
        return k, REPLAY_HELP
    if answer in ("", "n"):
        return k + 1, ""
    if answer == "b":
        return max(0, k - 1), ""
    if answer == "d":
        mine = [i for i in range(k + 1, last) if view is None or states[i].agent_selection == view]
        return (mine[0] if mine else last), ""
    if re.fullmatch(r"[0-9]{1,20}", answer):  # ASCII digits: isdigit() takes '²', which int() refuses
        if 1 <= int(answer) <= last + 1:
            return int(answer) - 1, ""
        return k, f"no move {answer}: type a number from 1 to {last + 1} ({last + 1} is the end). " + REPLAY_HELP
    return k, f"not a command: {answer!r}. " + REPLAY_HELP

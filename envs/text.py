"""Text mode: every game as prompts and answers, for language-model agents and people.

A seat's **prompt** (:func:`prompt`) is what a language agent reads at a decision: the game and its seat, the rules
in brief (the env module's own "Rules summary"), the seat's text view (``render_text(perspective=agent)``: what it
knows, history included), its legal actions by name, numbered, and the answer format. It is built from the seat's
view and legal actions alone, and the hidden-information audit (:mod:`parlour.envs.checks`) compares it across
redraws of everything the seat cannot see, in every env: a prompt that moves is a leak.

An **answer** (:func:`read_answer`) is one legal action's name (case and spacing aside) or its number in the prompt's
list; a model that adds words may put the action alone on the last line. Anything else is refused with a reason.

:class:`TextEnv` is a PettingZoo AEC wrapper whose observations are prompts and whose actions are answers; what it
does with a refused answer is an :class:`AnswerPolicy`: re-prompt with the reason, up to ``retries`` times, then
``forfeit`` (the default, as Kaggle's Game Arena does after one corrective re-prompt, and TextArena after its error
allowance: an agent that cannot follow the format loses the game) or play a uniformly random legal move (``random``,
drawn from a generator seeded by ``reset(seed=...)``, for training runs where a forfeit would end games too early).
The counts of refused answers, re-prompts and fallbacks are in the seat's infos (``infos[agent]["text"]``), and
:meth:`TextEnv.record` keeps every prompt and answer beside the game's record (a dataset to train on).
"""

from __future__ import annotations

import functools
import importlib
import re
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from parlour.envs.core import check_seed, normalise_name

if TYPE_CHECKING:
    from pettingzoo import AECEnv

    from parlour.envs.core import ParlourEnv

#: The prompt format's version: records of text-mode games name it, so that results of language agents say which
#: prompts they read.
TEXT_FORMAT = "parlour-text/1"
#: ``AnswerPolicy.on_invalid`` values.
FORFEIT = "forfeit"
RANDOM_MOVE = "random"
ON_INVALID = (FORFEIT, RANDOM_MOVE)
#: The longest prompt the observation space admits (the longest in the golden traces is far below).
MAX_PROMPT = 60_000
#: The longest answer read (a model that writes an essay is refused, not parsed).
MAX_ANSWER = 2_000
#: The characters a prompt may contain: printable ASCII, newlines, Latin-1 and Latin Extended-A letters, general
#: punctuation (dashes, quotes, ellipsis), arrows and the multiplication sign the views use.
CHARSET = frozenset(
    string.printable
    + "".join(chr(c) for c in range(0xA0, 0x180))
    + "".join(chr(c) for c in range(0x2010, 0x2028))
    + "".join(chr(c) for c in range(0x2190, 0x2200))
)


@dataclass(frozen=True)
class AnswerPolicy:
    """What :class:`TextEnv` does with an answer it cannot accept (unparsable, or an action that is not legal now)."""

    #: Corrective re-prompts (each with the reason) before giving up on the decision.
    retries: int = 1
    #: Then: ``forfeit`` (the seat loses: ``ParlourEnv.forfeit``) or ``random`` (a uniformly random legal move).
    on_invalid: str = FORFEIT

    def __post_init__(self) -> None:
        if not isinstance(self.retries, int) or isinstance(self.retries, bool) or self.retries < 0:
            raise ValueError(f"retries={self.retries!r} is not valid: expected a whole number of re-prompts >= 0")
        if self.on_invalid not in ON_INVALID:
            raise ValueError(f"on_invalid={self.on_invalid!r} is not valid: expected one of {list(ON_INVALID)}")


@functools.cache
def rules_summary(env_name: str) -> str:
    """The "Rules summary" section of the env module's docstring (``parlour.envs.<env>``), as one paragraph block."""
    doc = importlib.import_module(f"parlour.envs.{env_name}").__doc__ or ""
    found = re.search(r"Rules summary\n-+\n(.*?)\n\n[A-Z][^\n]*\n-+\n", doc, re.S)
    if found is None:
        raise ValueError(f"{env_name}: its module docstring has no 'Rules summary' section")
    return found.group(1).strip()


def prompt(env: ParlourEnv[Any], agent: str, *, rules: bool = True, reason: str | None = None) -> str:
    """``agent``'s prompt now: its view and, if it is to act, its legal actions and the answer format (``reason``: why
    its previous answer was refused). A function of what ``agent`` knows only."""
    title = f"{env.title} ({env.num_players} players)"
    lines = [f"You are {agent} in a game of {title}."]
    if rules:
        lines += ["", "Rules, in brief:", rules_summary(env.metadata["name"])]
    lines += ["", "What you see now:", env.render_text(perspective=agent), ""]
    if env.game_over or env.agent_selection != agent:
        lines.append("The game is over." if env.game_over else f"It is {env.agent_selection}'s turn; you wait.")
        return "\n".join(lines)
    names = env.legal_action_names(agent)
    lines.append("Your legal actions:")
    lines += [f"{i}. {name}" for i, name in enumerate(names, 1)]
    lines += [
        "",
        "Answer with one legal action: its name exactly as written above (case and spacing do not matter) or its "
        f"number in this list (1-{len(names)}), and nothing else.",
    ]
    if reason is not None:
        lines += ["", f"Your previous answer was not accepted: {reason}. Answer again."]
    return "\n".join(lines)


def read_answer(env: ParlourEnv[Any], agent: str, answer: Any) -> tuple[int | None, str]:
    """The action ``answer`` chooses for ``agent`` (who is to act), or ``None`` and why it was refused."""
    if not isinstance(answer, str):
        return None, f"an answer is text, not {type(answer).__name__}"
    if len(answer) > MAX_ANSWER:
        return None, f"the answer is {len(answer)} characters long; give only the action (at most {MAX_ANSWER})"
    legal = env.legal_actions(agent)
    lines = [line for line in answer.splitlines() if line.strip()]
    # the whole answer first, then its last line alone (a model that explains itself before answering); each as
    # written, then without quotes, backticks or bold marks around it, then without a final full stop
    for text in dict.fromkeys(v for c in [answer, *lines[-1:]] for v in _variants(c)):
        if text.isdigit():
            k = int(text)
            if 1 <= k <= len(legal):
                return legal[k - 1], ""
            return None, f"{text} is not a number in the list (1-{len(legal)})"
        try:
            action = env.parse_action(text)
        except ValueError:
            continue
        if action in legal:
            return action, ""
        return None, f"{env.action_names[action]!r} is not a legal action now"
    shown = normalise_name(answer)[:80]
    return None, f"{shown!r} is neither a legal action's name nor its number in the list"


def _variants(candidate: str) -> list[str]:
    """The readings of one candidate answer, the most literal first."""
    plain = candidate.strip()
    bare = plain.strip("`\"'*").strip()
    return [plain, bare, bare[:-1].rstrip()] if bare.endswith(".") else [plain, bare]


class TextEnv(BaseWrapper):
    """A Parlour AEC env in text: ``observe(agent)`` is the agent's prompt, ``step(answer)`` takes its answer.

    >>> from parlour.envs import make
    >>> from parlour.envs.text import TextEnv
    >>> env = TextEnv(make("six_suspects_v0"))
    >>> env.reset(seed=0)
    >>> prompt, reward, terminated, truncated, info = env.last()
    >>> env.step("1")  # the first legal action in the prompt's list

    A refused answer (:func:`read_answer`) leaves the same agent to act, its next prompt saying why, up to
    ``policy.retries`` times; then the :class:`AnswerPolicy`'s fallback. Rewards, terminations and truncations are
    the wrapped env's; ``infos[agent]["text"]`` counts the agent's refused answers (``invalid``), re-prompts
    (``reprompts``), forfeits and random fallbacks in this game."""

    def __init__(self, env: AECEnv, policy: AnswerPolicy | None = None, *, rules: bool = True) -> None:
        super().__init__(env)
        self.policy = policy or AnswerPolicy()
        self.rules = rules
        self.raw: ParlourEnv[Any] = env.unwrapped
        space = spaces.Text(max_length=MAX_PROMPT, min_length=1, charset=CHARSET)
        self._prompt_space = space
        self._answer_space = spaces.Text(max_length=MAX_ANSWER, min_length=0, charset=CHARSET)
        self._rng = np.random.default_rng()
        self._reason: str | None = None
        self._refused = 0
        self._counts: dict[str, dict[str, int]] = {}
        self.exchanges: list[dict[str, Any]] = []

    def observation_space(self, agent: str) -> spaces.Space:
        return self._prompt_space

    def action_space(self, agent: str) -> spaces.Space:
        return self._answer_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed("TextEnv.reset(seed=...)", seed)
        self.env.reset(seed=seed, options=options)
        # the fallback's own stream: the same seed, the same random moves (and the wrapped env's draws untouched)
        self._rng = np.random.default_rng(None if seed is None else [seed, 0x7E47])
        self._reason, self._refused = None, 0
        self._counts = {a: {"invalid": 0, "reprompts": 0, "forfeits": 0, "random_moves": 0} for a in self.agents}
        self.exchanges = []
        self._attach_counts()

    def observe(self, agent: str) -> str:
        reason = self._reason if agent == self.agent_selection else None
        return prompt(self.raw, agent, rules=self.rules, reason=reason)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        agent = self.agent_selection
        obs = self.observe(agent) if observe else None
        return (
            obs,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self.env.step(None if action is None else action)  # the wrapped env's dead step (and its checks)
            return
        seen = self.observe(agent)
        chosen, reason = read_answer(self.raw, agent, action)
        self.exchanges.append(
            {"agent": agent, "prompt": seen, "answer": action if isinstance(action, str) else repr(action)}
            | ({"action": chosen} if chosen is not None else {"refused": reason})
        )
        if chosen is not None:
            self._reason, self._refused = None, 0
            self.env.step(chosen)
        else:
            self._refuse(agent, reason)
        self._attach_counts()

    def _refuse(self, agent: str, reason: str) -> None:
        counts = self._counts[agent]
        counts["invalid"] += 1
        self._refused += 1
        if self._refused <= self.policy.retries:
            counts["reprompts"] += 1
            self._reason = reason
            for a in self.agents:  # a re-prompt is no move: nobody is paid for it
                self.rewards[a] = 0.0
            self._cumulative_rewards[agent] = 0.0  # what it had earned was handed out with the refused prompt
            return
        self._reason, self._refused = None, 0
        if self.policy.on_invalid == FORFEIT:
            counts["forfeits"] += 1
            self.raw.forfeit(f"{self.policy.retries + 1} answers in a row refused; the last: {reason}")
        else:
            counts["random_moves"] += 1
            legal = self.raw.legal_actions(agent)
            self.env.step(int(legal[self._rng.integers(len(legal))]))

    def _attach_counts(self) -> None:
        # each seat its own counts (another seat's refused answers are not its business)
        for a in self.agents:
            self.infos[a]["text"] = dict(self._counts.get(a, {}))

    def record(self) -> dict[str, Any]:
        """The game's record (``env.unwrapped.record()``, which :func:`parlour.envs.replay` replays) with every prompt
        and answer of this game, in order, and the prompt format."""
        return (
            self.raw.record()
            | {"text": {"format": TEXT_FORMAT, "policy": vars(self.policy).copy()}}
            | {"exchanges": list(self.exchanges)}
        )

    def __str__(self) -> str:
        return f"TextEnv<{self.env}>"


def main(argv: list[str] | None = None) -> int:
    """``python -m parlour.envs.text ENV [--seed N] [--moves K] [--no-rules]``: the prompt of the seat to act after
    ``K`` moves of a game dealt from seed ``N``, each move the first legal action (what a language agent reads)."""
    import argparse

    from parlour.envs import make

    parser = argparse.ArgumentParser(prog="python -m parlour.envs.text", description=main.__doc__)
    parser.add_argument("env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--moves", type=int, default=0)
    parser.add_argument("--no-rules", action="store_true")
    args = parser.parse_args(argv)
    env = make(args.env)
    env.reset(seed=args.seed)
    raw = env.unwrapped
    for _ in range(args.moves):
        if raw.game_over:
            break
        env.step(raw.legal_actions()[0])
    print(prompt(raw, env.agent_selection, rules=not args.no_rules))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

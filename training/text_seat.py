"""One seat in text: a Gymnasium env whose observation is the seat's prompt and whose action is its answer, the other
seats played by Parlour policies (bots, shipped networks, other language agents) -- for RL fine-tuning of language
models (multi-turn: one episode is one game, one step one answer) and for evaluating one.

It is :class:`parlour.training.single_agent.SingleAgentEnv` (the same seats, opponents and rewards: everything the
seat earned since its previous move) with :mod:`parlour.envs.text` in front: ``reset`` returns the prompt,
``step(answer)`` reads it (:func:`~parlour.envs.text.read_answer`). A refused answer is a step of its own -- reward 0,
the same decision, the next prompt saying why -- up to ``answers.retries`` times; then the :class:`AnswerPolicy`'s
fallback (a forfeit: ``illegal_reward`` and the episode ends; or a random legal move). ``info["text"]`` counts the
refused answers, re-prompts, forfeits and random moves of the episode, and :meth:`TextSeatEnv.record` keeps every
prompt and answer beside the game's record.

>>> from parlour.baselines import resolve
>>> env = TextSeatEnv("six_suspects_v0", [resolve("six_suspects_heuristic", "six_suspects_v0")])
>>> prompt, info = env.reset(seed=0)
>>> prompt, reward, terminated, truncated, info = env.step("1")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from parlour.baselines.base import Policy
from parlour.envs.core import check_seed
from parlour.envs.text import CHARSET, FORFEIT, MAX_ANSWER, MAX_PROMPT, TEXT_FORMAT, AnswerPolicy, prompt, read_answer
from parlour.training.single_agent import RANDOM_SEAT, SingleAgentEnv


class TextSeatEnv(gymnasium.Env[str, str]):
    """``gymnasium.Env`` of one seat in text (see the module's docstring); the keywords are
    :class:`~parlour.training.single_agent.SingleAgentEnv`'s, plus ``answers`` and ``rules`` (the rules in brief at the
    top of every prompt)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env_name: str,
        opponents: Sequence[Policy],
        *,
        env_kwargs: dict[str, Any] | None = None,
        learner_seat: int | str = RANDOM_SEAT,
        seed: int | None = None,
        opponent_draw: str = "seat",
        answers: AnswerPolicy | None = None,
        rules: bool = True,
    ) -> None:
        super().__init__()
        self.inner = SingleAgentEnv(
            env_name,
            opponents,
            env_kwargs=env_kwargs,
            learner_seat=learner_seat,
            seed=seed,
            opponent_draw=opponent_draw,
        )
        self.answers = answers or AnswerPolicy()
        self.rules = rules
        self.observation_space = spaces.Text(max_length=MAX_PROMPT, min_length=1, charset=CHARSET)
        self.action_space = spaces.Text(max_length=MAX_ANSWER, min_length=0, charset=CHARSET)
        self._fallback = np.random.default_rng(seed)
        self._reason: str | None = None
        self._refused = 0
        self._counts: dict[str, int] = {}
        self.exchanges: list[dict[str, Any]] = []

    @property
    def learner(self) -> str:
        return self.inner.learner

    def _prompt(self) -> str:
        return prompt(self.inner.aec, self.learner, rules=self.rules, reason=self._reason)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        seed = check_seed("TextSeatEnv.reset()", seed)
        super().reset(seed=seed)
        _, info = self.inner.reset(seed=seed, options=options)
        if seed is not None:
            self._fallback = np.random.default_rng([seed, 0x7E47])
        self._reason, self._refused = None, 0
        self._counts = {"invalid": 0, "reprompts": 0, "forfeits": 0, "random_moves": 0}
        self.exchanges = []
        return self._prompt(), info | {"text": dict(self._counts)}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        aec = self.inner.aec
        if aec.terminations.get(self.learner, True) or aec.truncations.get(self.learner, False):
            raise RuntimeError("TextSeatEnv.step() called after the episode ended; call reset()")
        seen = self._prompt()
        chosen, reason = read_answer(aec, self.learner, action)
        answer = action if isinstance(action, str) else repr(action)
        self.exchanges.append(
            {"agent": self.learner, "prompt": seen, "answer": answer}
            | ({"action": chosen} if chosen is not None else {"refused": reason})
        )
        if chosen is None:
            self._counts["invalid"] += 1
            self._refused += 1
            if self._refused <= self.answers.retries:
                self._counts["reprompts"] += 1
                self._reason = reason
                return self._prompt(), 0.0, False, False, {"text": dict(self._counts), "refused": reason}
            return self._fall_back(reason)
        self._reason, self._refused = None, 0
        _, reward, terminated, truncated, info = self.inner.step(chosen)
        return self._prompt(), reward, terminated, truncated, info | {"text": dict(self._counts)}

    def _fall_back(self, reason: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """After the last refused answer: forfeit the game, or play a random legal move."""
        aec = self.inner.aec
        self._reason, self._refused = None, 0
        if self.answers.on_invalid == FORFEIT:
            self._counts["forfeits"] += 1
            aec.forfeit(f"{self.answers.retries + 1} answers in a row refused; the last: {reason}")
            info = dict(aec.infos[self.learner]) | {"text": dict(self._counts)}
            return self._prompt(), aec.reward_since_last_move(self.learner), True, False, info
        self._counts["random_moves"] += 1
        legal = aec.legal_actions(self.learner)
        _, reward, terminated, truncated, info = self.inner.step(int(legal[self._fallback.integers(len(legal))]))
        return self._prompt(), reward, terminated, truncated, info | {"text": dict(self._counts)}

    def render(self) -> Any:
        return self.inner.render()

    def record(self) -> dict[str, Any]:
        """The game's record (the seat's and the opponents' moves; :func:`parlour.envs.replay` replays it) with the
        seat's prompts and answers, and the prompt format."""
        policy = {"retries": self.answers.retries, "on_invalid": self.answers.on_invalid}
        return self.inner.aec.record() | {
            "text": {"format": TEXT_FORMAT, "policy": policy},
            "exchanges": list(self.exchanges),
        }

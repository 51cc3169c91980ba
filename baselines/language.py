"""Language agents at a Parlour table: any ``prompt -> answer`` callable as a policy, and a client for any
OpenAI-compatible chat endpoint (OpenAI, vLLM, llama.cpp's server, Ollama, …).

A :class:`LanguagePolicy` plays wherever a policy plays (``parlour benchmark``, ``evaluate``, ``match``, ratings,
an opponent in training): at each of its decisions it reads the seat's prompt (:func:`parlour.envs.text.prompt`: the
rules in brief, the seat's view, its legal actions by name, the answer format), asks its agent, and reads the answer
(:func:`parlour.envs.text.read_answer`). A refused answer is re-asked with the reason, ``retries`` times (default 1);
then it forfeits the game (the default, as Kaggle's Game Arena does) or plays a random legal move
(``on_invalid="random"``, drawn from the game's generator). Every exchange -- prompt, answer, whether it was accepted
and why not, latency, tokens -- is kept and handed to the game's record (``exchanges``), so a benchmark's records are a
dataset to train on; :meth:`LanguagePolicy.game_summary` gives the per-game counts the evaluation tables report.

Each decision is one stateless request (the system message and the prompt): the prompt carries the seat's whole view,
history included, so no chat history is needed, and a game replays from its record alone.

Named as a policy spec:

- ``chat:MODEL@BASE_URL`` -- a model behind an OpenAI-compatible endpoint, with settings after ``?``:
  ``chat:qwen2.5-7b@http://127.0.0.1:8000/v1?temperature=0.2&max_tokens=64&timeout=30&retries=2&probe_every=5``
  (``probe_every``: ask the belief probe, :mod:`parlour.baselines.probe`, at every fifth decision). The key is read
  from the environment variable ``OPENAI_API_KEY`` (a local server needs none), never from the spec.
- ``text:module:NAME`` or ``text:path/to/file.py:NAME`` -- your own function (or callable object) ``NAME(prompt) ->
  answer``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from parlour.baselines.base import CHAT_PREFIX, TEXT_PREFIX, Policy, Table
from parlour.envs.text import FORFEIT, AnswerPolicy, prompt, read_answer

if TYPE_CHECKING:
    from parlour.envs.core import ParlourEnv

__all__ = ["CHAT_PREFIX", "TEXT_PREFIX", "ChatClient", "LanguagePolicy", "Reply", "chat_client", "chat_policy"]
#: The system message of every chat request.
SYSTEM_PROMPT = (
    "You are playing a tabletop game. Each message shows the rules in brief, what you can see, and your legal "
    "actions. Reply with exactly one of the legal actions (its name or its number in the list) and nothing else."
)


@dataclass(frozen=True)
class Reply:
    """An agent's answer, with what it cost where the agent says (``None``: not reported)."""

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


#: A language agent: a prompt in, an answer (text or a :class:`Reply`) out.
TextAgent = Callable[[str], "str | Reply"]


@dataclass
class ChatClient:
    """A model behind any OpenAI-compatible chat-completions endpoint (the ``openai`` package: ``pip install
    ".[llm]"``); calling it with a prompt returns a :class:`Reply`. Failed requests are retried by the SDK
    (``retries``, with back-off) within ``timeout`` seconds each; what still fails raises."""

    model: str
    base_url: str
    temperature: float = 0.0
    max_tokens: int = 64
    timeout: float = 60.0
    retries: int = 2
    system: str = SYSTEM_PROMPT
    _client: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        scheme = urlsplit(self.base_url).scheme
        if scheme not in ("http", "https"):
            raise ValueError(
                f"chat: base URL {self.base_url!r} is not an http(s) URL (such as http://127.0.0.1:8000/v1)"
            )
        if not self.model:
            raise ValueError("chat: the model name is empty")
        checks = [
            ("temperature", 0.0 <= self.temperature <= 2.0, "a number in [0, 2]"),
            ("max_tokens", isinstance(self.max_tokens, int) and self.max_tokens >= 1, "a whole number >= 1"),
            ("timeout", self.timeout > 0, "a number of seconds > 0"),
            ("retries", isinstance(self.retries, int) and self.retries >= 0, "a whole number >= 0"),
        ]
        for key, ok, expected in checks:
            if not ok:
                raise ValueError(f"chat: {key}={getattr(self, key)!r} is not valid: expected {expected}")

    def __call__(self, text: str) -> Reply:
        if self._client is None:
            try:
                from openai import OpenAI
            except ImportError as exc:
                raise ImportError('a chat: agent needs the openai package: pip install ".[llm]"') from exc
            key = os.environ.get("OPENAI_API_KEY") or "not-needed"  # a local server takes any key
            self._client = OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout, max_retries=self.retries)
        r = self._client.chat.completions.create(
            model=self.model,
            messages=[{"role": "system", "content": self.system}, {"role": "user", "content": text}],
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )
        usage = getattr(r, "usage", None)
        return Reply(
            r.choices[0].message.content or "",
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
        )

    def __getstate__(self) -> dict[str, Any]:
        # the SDK's client holds connections: a copy (another process) makes its own
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "_client"} | {"_client": None}


#: ``chat:`` spec settings and their types.
CHAT_SETTINGS: dict[str, type] = {"temperature": float, "max_tokens": int, "timeout": float, "retries": int}
#: ``chat:`` spec settings of the policy rather than the client.
POLICY_SETTINGS: dict[str, type] = {"probe_every": int}


def chat_settings(spec: str) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """``(model, base URL, client settings, policy settings)`` of a ``chat:MODEL@BASE_URL[?KEY=VALUE&…]`` spec; a
    malformed one is one line naming what is wrong and what is allowed."""
    body = spec[len(CHAT_PREFIX) :] if spec.startswith(CHAT_PREFIX) else spec
    model, at, url = body.partition("@")
    if not at or not model or not url:
        raise ValueError(f"policy {spec!r}: expected chat:MODEL@BASE_URL (e.g. chat:my-model@http://127.0.0.1:8000/v1)")
    base, _, query = url.partition("?")
    client: dict[str, Any] = {}
    policy: dict[str, Any] = {}
    allowed = CHAT_SETTINGS | POLICY_SETTINGS
    for key, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)):
        kind = allowed.get(key)
        if kind is None:
            raise ValueError(f"policy {spec!r}: unknown setting {key!r}; allowed: {sorted(allowed)}")
        try:
            (policy if key in POLICY_SETTINGS else client)[key] = kind(value)
        except ValueError:
            raise ValueError(f"policy {spec!r}: {key}={value!r} is not a {kind.__name__}") from None
    return model, base, client, policy


def chat_client(spec: str) -> ChatClient:
    """The :class:`ChatClient` of a ``chat:`` spec (:func:`chat_settings`)."""
    model, base, client, _ = chat_settings(spec)
    return ChatClient(model=model, base_url=base, **client)


def chat_policy(spec: str, label: str | None = None) -> LanguagePolicy:
    """The :class:`LanguagePolicy` of a ``chat:`` spec: its client, and the policy's own settings (``probe_every``)."""
    model, base, client, policy = chat_settings(spec)
    return LanguagePolicy(ChatClient(model=model, base_url=base, **client), name=label or f"chat:{model}", **policy)


class LanguagePolicy(Policy):
    """A language agent in a seat: it reads the seat's prompt and answers it (see the module's docstring)."""

    needs_env = True  # it reads the seat's text view through the env (the prompt: audited, nothing hidden)

    def __init__(
        self,
        agent: TextAgent,
        *,
        name: str = "language-agent",
        answers: AnswerPolicy | None = None,
        rules: bool = True,
        probe_every: int = 0,
    ) -> None:
        if not callable(agent):
            raise TypeError(f"a language agent is a callable prompt -> answer, not {type(agent).__name__}")
        self.agent = agent
        self.name = name  # type: ignore[misc]
        self.answers = answers or AnswerPolicy()
        self.rules = rules
        if not isinstance(probe_every, int) or isinstance(probe_every, bool) or probe_every < 0:
            raise ValueError(f"probe_every={probe_every!r} is not valid: expected a whole number >= 0 (0: no probe)")
        #: Ask the belief probe (:mod:`parlour.baselines.probe`) at every this-many-th decision of a game (0: never).
        self.probe_every = probe_every
        #: Every exchange not yet handed to a record, keyed by the game (the env object and its deal) and seat.
        self._exchanges: dict[tuple[int, int | None, str], list[dict[str, Any]]] = {}

    def check_table(self, table: Table) -> None:
        """A probe asked for at a game without one is refused here, before the first step."""
        super().check_table(table)
        if self.probe_every:
            from parlour.baselines import game_name
            from parlour.baselines.probe import PROBES

            if game_name(table.env) not in PROBES:
                raise ValueError(
                    f"{self.name}: probe_every={self.probe_every}, but {table.env} has no belief probe (nothing hidden "
                    f"decides it); games with one: {sorted(PROBES)}"
                )

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
        raise TypeError(f"{self.name} reads the table's text, not a vector: it plays through act_with_env")

    def act_with_env(self, env: ParlourEnv[Any], agent: str, rng: np.random.Generator) -> int:
        log = self._exchanges.setdefault((id(env), env.game_seed, agent), [])
        decision = sum("probe" not in e and "refused" not in e for e in log)
        if self.probe_every and decision % self.probe_every == 0:
            self._probe(env, agent, log)
        reason: str | None = None
        for _ in range(self.answers.retries + 1):
            seen = prompt(env, agent, rules=self.rules, reason=reason)
            reply, entry = self._ask(seen, agent)
            chosen, reason = read_answer(env, agent, reply.text)
            log.append(entry | ({"action": chosen} if chosen is not None else {"refused": reason}))
            if chosen is not None:
                return chosen
        if self.answers.on_invalid == FORFEIT:
            env.forfeit(f"{self.answers.retries + 1} answers in a row refused; the last: {reason}")
            return -1  # the game is over: the evaluation loop steps nothing for it
        legal = env.legal_actions(agent)
        return int(legal[rng.integers(len(legal))])

    def _ask(self, text: str, agent: str) -> tuple[Reply, dict[str, Any]]:
        """One request: the agent's reply and the exchange's entry (prompt, answer, latency, tokens)."""
        start = time.perf_counter()
        reply = self.agent(text)
        latency = time.perf_counter() - start
        reply = reply if isinstance(reply, Reply) else Reply(reply if isinstance(reply, str) else repr(reply))
        entry = {
            "agent": agent,
            "prompt": text,
            "answer": reply.text,
            "latency_s": round(latency, 4),
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
        }
        return reply, entry

    def _probe(self, env: ParlourEnv[Any], agent: str, log: list[dict[str, Any]]) -> None:
        """Ask the belief probe (re-asked as a move is, ``retries`` times); an answer is scored against the truth and
        the posterior after it is given, and kept in the exchange log only (the agent never sees the truth)."""
        from parlour.baselines.probe import probe_for, probe_prompt, read_probabilities, score

        probe = probe_for(env)
        reason: str | None = None
        for _ in range(self.answers.retries + 1):
            reply, entry = self._ask(probe_prompt(env, agent, probe, reason), agent)
            q, reason = read_probabilities(reply.text, probe.options)
            scored = score(env, agent, probe, q) if q is not None else {"refused": reason}
            log.append(entry | {"probe": scored})
            if q is not None:
                return

    def take_exchanges(self, env: ParlourEnv[Any]) -> list[dict[str, Any]]:
        """Hand over (and forget) every exchange of the game just played in ``env``, all seats, in order of play."""
        keys = [k for k in self._exchanges if k[0] == id(env) and k[1] == env.game_seed]
        out = [e for k in keys for e in self._exchanges.pop(k)]
        return out

    @staticmethod
    def game_summary(exchanges: list[dict[str, Any]]) -> dict[str, Any]:
        """Per-game counts of a list of exchanges: requests, refused answers, tokens (``None`` where the agent did
        not report them) and latency."""
        tokens = {
            k: (None if any(e[k] is None for e in exchanges) else sum(e[k] for e in exchanges))
            for k in ("prompt_tokens", "completion_tokens")
        }
        latency = [e["latency_s"] for e in exchanges]
        probes = [e["probe"] for e in exchanges if "probe" in e]
        scored = [p for p in probes if "log_score" in p]
        out = {
            "requests": len(exchanges),
            "invalid": sum("refused" in e for e in exchanges),
            **tokens,
            "latency_s": round(sum(latency), 4),
            "mean_latency_s": round(sum(latency) / len(latency), 4) if latency else None,
        }
        if probes:
            out["probes"] = {
                "asked": len(probes),
                "refused": len(probes) - len(scored),
                # each answer's stated probabilities and the truth, for the matchup's calibration
                "answers": [{k: p[k] for k in ("stated", "truth", "log_score", "posterior_log_score") if k in p}
                            for p in scored],
            }  # fmt: skip
        return out

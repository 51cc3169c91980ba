"""The game contract's dependency-free half: what pure rules import (NumPy and the standard library only).

- :class:`RulesState`: what the generic AEC driver (:mod:`parlour.envs.core`) and the search bots need from a game's
  pure rules state; :class:`Rules` gives every game the same checked :meth:`Rules.apply` over its unchecked
  :meth:`~RulesState.play`.
- The keyword validators a game's ``Options`` dataclass uses (:func:`check_int`, :func:`check_choice`,
  :func:`check_bool`), and :func:`build_options` / :func:`options_record`, which turn keywords into that dataclass
  and back.

Nothing here imports gymnasium or PettingZoo, so ``import parlour.envs.<game>.rules`` stays free of them.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import numpy as np


class RulesState(Protocol):
    """What the driver needs from a game's pure rules state."""

    #: Whether a finished game was ended by a turn cap of the rules' own (nobody won or lost by the rules).
    truncated: bool
    #: What each action changed, for an incremental encoder (see :class:`Rules`).
    changes: list[tuple[Any, ...]] | None

    @property
    def current_player(self) -> int:
        """The seat to decide next; ``-1`` if and only if the game is over."""
        ...

    @property
    def turns(self) -> int:
        """Turns taken so far (what the driver's ``max_turns`` cap counts)."""
        ...

    def legal_mask(self) -> np.ndarray:
        """``int8`` mask over the flat action space for ``current_player``: a read-only array, made afresh
        whenever it changes (or a shared read-only constant), since the driver hands it out without a copy."""
        ...

    def apply(self, action: int) -> Sequence[float] | None:
        """Play ``action`` for ``current_player`` after checking it is legal (``ValueError`` if not); return
        per-seat reward deltas, or ``None`` for none."""
        ...

    def play(self, action: int) -> Sequence[float] | None:
        """:meth:`apply` without the legality check, for callers that have checked the mask (the driver, search)."""
        ...

    def is_terminal(self) -> bool:
        """The game is over (by its rules, or by a turn cap of its own, which it says by ``truncated = True``)."""
        ...

    def outcome(self) -> dict[str, Any]:
        """The result so far (final once terminal), with the revealed hidden state; JSON-serialisable. Holds
        ``winners``: the seats that won."""
        ...

    def clone(self) -> RulesState: ...


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """An independent generator with ``rng``'s state (the same future draws), a third of the cost of
    ``copy.deepcopy`` (which goes through pickling). The copy keeps no ``SeedSequence``: nothing copied spawns."""
    bits = type(rng.bit_generator)(0)
    bits.state = rng.bit_generator.state
    return np.random.Generator(bits)


class Rules:
    """Base of every game's rules state: the checked :meth:`apply` over the game's own unchecked ``play``."""

    #: Set by a game whose rules cap its length (Lady Alice's rounds, Elevenses' turns) when the cap ends it.
    truncated: bool = False
    #: What each action changed, noted by ``play`` for an incremental encoder (the env sets a list and empties it
    #: after every action; ``None``: nobody listens, and the rules note nothing: search copies, ``clone()``).
    changes: list[tuple[Any, ...]] | None = None

    def legal_mask(self) -> np.ndarray:  # pragma: no cover - every game defines it
        raise NotImplementedError

    def play(self, action: int) -> Sequence[float] | None:  # pragma: no cover - every game defines it
        raise NotImplementedError

    def clone(self) -> Any:  # pragma: no cover - every game defines it
        raise NotImplementedError

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """``copy.deepcopy`` (an env's ``clone()``, the audit's and the search bots' redraws) through the game's own
        field-wise :meth:`clone`: the same independent state, without ``deepcopy`` walking every int of every list
        (most of the hidden-information audit's time). ``changes`` is deep-copied with the caller's ``memo``, so an
        env's copy keeps sharing its list with its own encoder, as a plain ``deepcopy`` would."""
        new = self.clone()
        memo[id(self)] = new
        new.changes = copy.deepcopy(self.changes, memo)
        return new

    def apply(self, action: int) -> Sequence[float] | None:
        """Play ``action`` for the seat to decide; ``ValueError`` naming the legal actions if it is not one."""
        mask = self.legal_mask()
        if isinstance(action, bool) or not isinstance(action, int | np.integer) or not 0 <= action < len(mask):
            raise ValueError(f"action {action!r} is not valid: expected an integer in [0, {len(mask) - 1}]")
        if not mask[action]:
            legal = [int(a) for a in np.flatnonzero(mask)]
            seat = getattr(self, "current_player", "?")
            raise ValueError(f"illegal action {int(action)} for seat {seat}; legal: {legal}")
        return self.play(int(action))


# ----------------------------------------------------------------------------------------------- keywords
def check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    """Validate an integer keyword, naming the allowed range in the error."""
    allowed = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name}={value!r} is not valid: expected {allowed}")
    if value < low or (high is not None and value > high):
        raise ValueError(f"{name}={value!r} is out of range: expected {allowed}")
    return int(value)


def check_choice(name: str, value: Any, choices: tuple[Any, ...]) -> Any:
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not valid: expected one of {list(choices)}")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name}={value!r} is not valid: expected True or False")
    return bool(value)


def build_options(cls: Callable[..., Any], name: str, kwargs: Mapping[str, Any]) -> Any:
    """Construct a game's options dataclass, turning unknown keywords into a clear ``ValueError``."""
    allowed = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type,unused-ignore]
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(f"{name}: unknown keyword(s) {unknown}; allowed: {allowed}")
    return cls(**kwargs)


def options_record(options: Any) -> dict[str, Any]:
    """A game's validated options dataclass as the JSON-friendly keywords that recreate it (tuples as lists;
    ``num_players`` is the driver's own)."""
    return {
        f.name: list(v) if isinstance(v := getattr(options, f.name), tuple) else v
        for f in dataclasses.fields(options)
        if f.name != "num_players"
    }

"""One learning seat over a JAX core, with batched opponents in the other seats and autoreset: the functional
counterpart of :class:`parlour.training.single_agent.SingleAgentEnv`, shared by the JAX vector env and the jitted
trainer.

Per episode the learner takes ``learner_seat`` (``None``: drawn uniformly), and the other seats are filled from the
opponent pool: ``opponent_draw="table"`` draws one opponent for the whole table (as the benchmark's tables are),
``"seat"`` draws one per seat, every entry alike -- or, given ``draw_probs``, each entry with its probability (the
jitted trainer's prioritised sampling: :mod:`parlour.training.jax_ppo`). Opponents are jittable functions ``(observation, action_mask, key) -> action``
(``parlour.baselines.jax_bots``); they act inside :func:`SingleSeat.step` until the learner is to act again or the
game ends. The reward of a transition is everything the learner earned since its previous move -- its own move's
reward, every reward caused by opponents' moves, and a terminal reward even when an opponent's move ended the game --
as ``SingleAgentEnv`` attributes it. A deal in which the learner never gets to act is dealt again. When an episode
ends, the next one starts in the same call (autoreset): the returned observation and mask are the new episode's, and
``terminated``/``truncated`` say that the transition ended the old one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from parlour.envs.jax_core import Core, reset_where

#: A batched opponent: ``(observation, action_mask, key) -> action`` (jittable, one game; vmap batches it).
Opponent = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]


class SeatState(NamedTuple):
    """One game seen from the learning seat."""

    game: Any
    #: The learner's seat this episode.
    seat: jax.Array
    #: Per seat, the index in the pool of the opponent playing it (the learner's own entry is unused).
    opponents: jax.Array
    key: jax.Array


class Transition(NamedTuple):
    state: SeatState
    #: The learner's observation and mask to act on (the next episode's after an episode ended).
    observation: jax.Array
    mask: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    #: The learner's observation where the transition left the game, before any autoreset (a learner that
    #: bootstraps a truncated episode's value reads it).
    final_observation: jax.Array


def _over(game: Any) -> jax.Array:
    return jnp.logical_or(game.terminated, game.truncated)


class SingleSeat:
    """``reset(key)`` and ``step(state, action)`` of one learning seat (pure functions: ``jax.vmap`` them over a
    batch, ``jax.jit`` the result)."""

    def __init__(
        self,
        core: Core,
        opponents: Sequence[Opponent],
        *,
        learner_seat: int | None = None,
        opponent_draw: str = "seat",
        draw_probs: jax.Array | None = None,
    ) -> None:
        if not opponents:
            raise ValueError("SingleSeat: the opponent pool is empty")
        if opponent_draw not in ("seat", "table"):
            raise ValueError(f"opponent_draw={opponent_draw!r} is not valid: expected one of ['seat', 'table']")
        if learner_seat is not None and not 0 <= learner_seat < core.num_players:
            raise ValueError(f"learner_seat={learner_seat} is out of range: expected 0..{core.num_players - 1}")
        self.core = core
        self.opponents = tuple(opponents)
        self.learner_seat = learner_seat
        self.opponent_draw = opponent_draw
        #: The probability of each pool entry per draw (a table's or a seat's); ``None``: uniform, drawn as
        #: ``randint`` (the draws of every run before prioritised sampling, kept as they were).
        self.draw_probs = draw_probs

    # ------------------------------------------------------------------------------------------- opponents
    def _opponent_action(self, game: Any, pool_index: jax.Array, key: jax.Array) -> jax.Array:
        seat = game.current_player
        obs, mask = self.core.observe(game, seat), self.core.legal_mask(game)
        if len(self.opponents) == 1:
            return self.opponents[0](obs, mask, key)
        branches = [lambda o, m, k, f=f: f(o, m, k).astype(jnp.int32) for f in self.opponents]
        return jax.lax.switch(pool_index, branches, obs, mask, key)

    def _play_opponents(self, game: Any, seat: jax.Array, opponents: jax.Array, key: jax.Array) -> tuple[Any, Any]:
        """Opponents act until the learner is to act or the game is over; returns the game and what the learner
        earned meanwhile."""

        def waiting(carry: tuple[Any, jax.Array, jax.Array]) -> jax.Array:
            game = carry[0]
            return jnp.logical_and(jnp.logical_not(_over(game)), game.current_player != seat)

        def act(carry: tuple[Any, jax.Array, jax.Array]) -> tuple[Any, jax.Array, jax.Array]:
            game, earned, key = carry
            key, sub = jax.random.split(key)
            action = self._opponent_action(game, opponents[game.current_player], sub)
            game = self.core.step(game, action)
            return game, earned + game.rewards[seat], key

        game, earned, _ = jax.lax.while_loop(waiting, act, (game, jnp.float32(0.0), key))
        return game, earned

    # ------------------------------------------------------------------------------------------- episodes
    def _deal(self, key: jax.Array) -> SeatState:
        """A new episode whose learner gets to act (deals again until it does)."""
        n = self.core.num_players

        def one(key: jax.Array) -> tuple[SeatState, jax.Array]:
            key, k_game, k_seat, k_opp, k_play = jax.random.split(key, 5)
            seat = jax.random.randint(k_seat, (), 0, n) if self.learner_seat is None else jnp.int32(self.learner_seat)
            size = len(self.opponents)
            if self.draw_probs is not None:
                logp = jnp.log(self.draw_probs)
                if self.opponent_draw == "table":
                    opponents = jnp.full((n,), jax.random.categorical(k_opp, logp))
                else:
                    opponents = jax.random.categorical(k_opp, logp, shape=(n,))
            elif self.opponent_draw == "table":
                opponents = jnp.full((n,), jax.random.randint(k_opp, (), 0, size))
            else:
                opponents = jax.random.randint(k_opp, (n,), 0, size)
            game, _ = self._play_opponents(self.core.init(k_game), seat, opponents, k_play)
            return SeatState(game, seat.astype(jnp.int32), opponents.astype(jnp.int32), key), _over(game)

        first = one(key)
        state, _ = jax.lax.while_loop(lambda c: c[1], lambda c: one(c[0].key), first)
        return state

    def _view(self, state: SeatState) -> tuple[jax.Array, jax.Array]:
        return self.core.observe(state.game, state.seat), self.core.legal_mask(state.game)

    def reset(self, key: jax.Array) -> tuple[SeatState, jax.Array, jax.Array]:
        """A new episode: its state, the learner's observation and legal mask."""
        state = self._deal(key)
        obs, mask = self._view(state)
        return state, obs, mask

    def _advance(self, state: SeatState, action: jax.Array) -> tuple[SeatState, jax.Array, jax.Array, jax.Array]:
        """The learner's move and the opponents' answers, without a restart: the state, the learner's reward, its
        final observation, and the key of the next episode's deal."""
        key, k_play, k_next = jax.random.split(state.key, 3)
        game = self.core.step(state.game, action)
        earned = game.rewards[state.seat]
        game, more = self._play_opponents(game, state.seat, state.opponents, k_play)
        return state._replace(game=game, key=key), earned + more, self.core.observe(game, state.seat), k_next

    def step(self, state: SeatState, action: jax.Array) -> Transition:
        """The learner plays ``action`` (a legal one); opponents answer; a finished episode restarts. For one game
        (under ``vmap`` the restart's deal is computed for every game: :meth:`step_batch` deals only where one
        ended, with the same result)."""
        carried, reward, final, k_next = self._advance(state, action)
        game = carried.game
        nxt = jax.lax.cond(_over(game), lambda: self._deal(k_next), lambda: carried)
        obs, mask = self._view(nxt)
        return Transition(nxt, obs, mask, reward, game.terminated, game.truncated, final)

    def step_batch(self, states: SeatState, actions: jax.Array) -> Transition:
        """:meth:`step` of a batch of games (leading axis), equal to ``jax.vmap(step)`` but dealing a new
        episode only in the games that ended (:func:`~parlour.envs.jax_core.reset_where`): a deal plays the
        opponents up to the learner's first move, far too dear to compute for every game at every step."""
        carried, reward, final, k_next = jax.vmap(self._advance)(states, actions)
        game = carried.game
        nxt = reset_where(self._deal, carried, k_next, _over(game))
        obs, mask = jax.vmap(self._view)(nxt)
        return Transition(nxt, obs, mask, reward, game.terminated, game.truncated, final)

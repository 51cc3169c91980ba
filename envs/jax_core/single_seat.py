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

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from parlour.envs.jax_core import Core, reset_where

#: A batched opponent: ``(observation, action_mask, key) -> action`` (jittable, one game; vmap batches it).
Opponent = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]


class Slots(NamedTuple):
    """One entry of the pool that plays one of ``size`` policies per episode, ``act(obs, mask, key, slot)`` (``slot``
    in ``0..size-1``, drawn uniformly per table or seat it fills; a Python int where the batch's moves compute each
    slot as a policy of its own, on the games that wait on it, an array in a game's own loop): the jitted trainer's
    ring of past parameters. Drawn as one entry (the pool's draw probabilities are per entry), so a ring of ``K``
    networks sits at one entry's share of the tables."""

    act: Callable[[jax.Array, jax.Array, jax.Array, Any], jax.Array]
    size: int


class SeatState(NamedTuple):
    """One game seen from the learning seat."""

    game: Any
    #: The learner's seat this episode.
    seat: jax.Array
    #: Per seat, the index in the pool of the opponent playing it (the learner's own entry is unused).
    opponents: jax.Array
    key: jax.Array


class Carry(NamedTuple):
    """The opponents' loop of one game: the game, what the learner earned in it, the key, the moves made."""

    game: Any
    earned: jax.Array
    key: jax.Array
    moves: jax.Array


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
    #: ``SingleSeat(hindsight=True)``: the core's ``hindsight`` of the game where the transition left it, from the
    #: learner's seat (the belief heads' target where the transition ended the episode); else ``None``.
    hindsight: jax.Array | None = None


def _slot_entry(act: Callable[..., jax.Array], slot: int, obs: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
    """One slot of a :class:`Slots` entry as a policy of its own."""
    return act(obs, mask, key, slot)


def _over(game: Any) -> jax.Array:
    return jnp.logical_or(game.terminated, game.truncated)


class SingleSeat:
    """``reset(key)`` and ``step(state, action)`` of one learning seat (pure functions: ``jax.vmap`` them over a
    batch, ``jax.jit`` the result)."""

    def __init__(
        self,
        core: Core,
        opponents: Sequence[Opponent | Slots],
        *,
        learner_seat: int | None = None,
        opponent_draw: str = "seat",
        draw_probs: jax.Array | None = None,
        rotation: int | None = None,
        stragglers: int | None = None,
        chunk: int | None = None,
        hindsight: bool = False,
        settle: bool = False,
    ) -> None:
        if not opponents:
            raise ValueError("SingleSeat: the opponent pool is empty")
        if opponent_draw not in ("seat", "table"):
            raise ValueError(f"opponent_draw={opponent_draw!r} is not valid: expected one of ['seat', 'table']")
        if learner_seat is not None and not 0 <= learner_seat < core.num_players:
            raise ValueError(f"learner_seat={learner_seat} is out of range: expected 0..{core.num_players - 1}")
        self.core = core
        #: The pool's entries (what ``draw_probs`` weighs): an opponent function, or :class:`Slots`.
        self.groups = tuple(opponents)
        #: The pool by policy (what ``SeatState.opponents`` indexes): each entry, a :class:`Slots` entry as its slots.
        self.opponents: tuple[Opponent, ...] = tuple(
            e
            for g in self.groups
            for e in (
                [functools.partial(_slot_entry, g.act, k) for k in range(g.size)] if isinstance(g, Slots) else [g]
            )
        )
        sizes = [g.size if isinstance(g, Slots) else 1 for g in self.groups]
        #: Per entry, its first index in :attr:`opponents` and its number of policies (``None``: no :class:`Slots`,
        #: every entry one policy, drawn as every run before them drew). :attr:`entry_of`: the entry of each policy.
        slots = max(sizes) > 1
        self._starts = jnp.asarray(np.cumsum([0, *sizes[:-1]]), jnp.int32) if slots else None
        self._sizes = jnp.asarray(sizes, jnp.int32) if slots else None
        self.entry_of = np.repeat(np.arange(len(sizes)), sizes).astype(np.int32)
        self.learner_seat = learner_seat
        self.opponent_draw = opponent_draw
        #: The probability of each pool entry per draw (a table's or a seat's); ``None``: uniform, drawn as
        #: ``randint`` (the draws of every run before prioritised sampling, kept as they were).
        self.draw_probs = draw_probs
        #: :meth:`step_batch`: the opponents' moves every game makes together before the stragglers finish alone
        #: (the other seats' turns of a round), and how many stragglers finish at once (``None``: an eighth of the
        #: batch). Speed only: the transitions are the same whatever they are.
        self.rotation = rotation if rotation is not None else core.num_players - 1
        self.stragglers = stragglers
        #: :meth:`step_batch`: how many games an opponent's policy computes at once, only the games waiting on it
        #: (``None``: a quarter of the batch). Speed only, like :attr:`rotation`.
        self.chunk = chunk
        if hindsight and core.hindsight is None:
            raise ValueError(f"{core.env_id}: the JAX core has no hindsight (the end-of-game reveal as targets)")
        #: Whether transitions carry the core's hindsight of the game they left (training targets only).
        self.hindsight = hindsight
        #: Whether a learner the core calls settled (``Core.settled``: it will not act again, its rewards are known)
        #: ends its episode there, paid what the game's end would pay it, instead of watching the rest played out.
        #: ``False`` where the core has no ``settled``.
        self.settle = settle and core.settled is not None

    # ------------------------------------------------------------------------------------------- opponents
    def _opponent_action(self, game: Any, pool_index: jax.Array, key: jax.Array) -> jax.Array:
        seat = game.current_player
        obs, mask = self.core.observe(game, seat), self.core.legal_mask(game)
        if len(self.opponents) == 1:
            return self.opponents[0](obs, mask, key)
        if self._starts is None:
            branches = [lambda o, m, k, f=f: f(o, m, k).astype(jnp.int32) for f in self.opponents]
            return jax.lax.switch(pool_index, branches, obs, mask, key)
        # a switch under vmap computes every branch for every game: a ring of K networks is one branch (its slot an
        # array here), not K
        entry = jnp.asarray(self.entry_of)[pool_index]
        slot = pool_index - self._starts[entry]
        branches = [
            (lambda o, m, k, g=g: g.act(o, m, k, slot).astype(jnp.int32))
            if isinstance(g, Slots)
            else (lambda o, m, k, g=g: g(o, m, k).astype(jnp.int32))
            for g in self.groups
        ]
        return jax.lax.switch(entry, branches, obs, mask, key)

    def _opponents_loop(self, carry: Carry, seat: jax.Array, opponents: jax.Array, limit: int | None = None) -> Carry:
        """Opponents act, from ``carry``, until the learner is to act or the game is over (or ``limit`` moves of
        this call have been made); the carry counts what the learner earned meanwhile and the moves made."""

        def waiting(carry: Carry) -> jax.Array:
            more = self._waiting(carry.game, seat)
            return more if limit is None else jnp.logical_and(more, carry.moves < limit)

        def act(carry: Carry) -> Carry:
            game, earned, key, moves = carry
            key, sub = jax.random.split(key)
            action = self._opponent_action(game, opponents[game.current_player], sub)
            game = self.core.step(game, action)
            return Carry(game, earned + game.rewards[seat], key, moves + 1)

        return jax.lax.while_loop(waiting, act, carry)

    def _play_opponents(self, game: Any, seat: jax.Array, opponents: jax.Array, key: jax.Array) -> tuple[Any, Any]:
        """Opponents act until the learner is to act or the game is over; returns the game and what the learner
        earned meanwhile."""
        carry = self._opponents_loop(Carry(game, jnp.float32(0.0), key, jnp.int32(0)), seat, opponents)
        return carry.game, carry.earned

    def _play_opponents_batch(self, carry: Carry, seats: jax.Array, opponents: jax.Array) -> Carry:
        """:meth:`_play_opponents` of a batch (leading axis), with the same result game by game, but neither in lock
        step nor computing every opponent for every game. Under ``vmap`` a loop runs until its longest game is done,
        every game computing at every turn, and one game whose learner is out (a false accusation in Lady Alice: the
        rest of the game is played out before the learner's episode ends) would hold the whole batch for a hundred
        turns; and a ``switch`` over the pool under ``vmap`` computes every entry (the learner's network among them)
        for every game. So the batch moves at its own level (:meth:`_batch_move`: an entry computes only where some
        game is waiting on it), first up to :attr:`rotation` moves per game (the turns of the other seats, as a
        round usually goes, and for as long as more games wait than :attr:`stragglers`), and the games still waiting
        then finish on their own, :attr:`stragglers` at a time."""
        batch = seats.shape[0]
        cap = min(batch, self.stragglers or max(1, batch // 8))

        def waiting(c: Carry, who: jax.Array) -> jax.Array:
            return jax.vmap(self._waiting)(c.game, who)

        def rotating(c: Carry) -> jax.Array:
            # while more games wait than a straggler batch holds, all of them move together (an Elevenses learner
            # waits from no move to a dozen and more); past that, only those still in their first `rotation` moves
            w = waiting(c, seats)
            return jnp.where(w.sum() > cap, w, jnp.logical_and(w, c.moves < self.rotation))

        carry = jax.lax.while_loop(
            lambda c: rotating(c).any(), lambda c: self._batch_move(c, rotating(c), seats, opponents), carry
        )

        def finish(c: Carry) -> Carry:
            rows = jnp.nonzero(waiting(c, seats), size=cap, fill_value=batch)[0]  # the waiting games, then "none"
            take = jnp.minimum(rows, batch - 1)
            sub, who, pool = jax.tree.map(lambda x: x[take], c), seats[take], opponents[take]
            done = jax.lax.while_loop(
                lambda d: waiting(d, who).any(), lambda d: self._batch_move(d, waiting(d, who), who, pool), sub
            )
            return jax.tree.map(lambda x, d: x.at[rows].set(d, mode="drop"), c, done)

        return jax.lax.while_loop(lambda c: waiting(c, seats).any(), finish, carry)

    def _batch_move(self, c: Carry, moving: jax.Array, seats: jax.Array, opponents: jax.Array) -> Carry:
        """One opponent's move in each game of a batch where ``moving``, as :meth:`_opponents_loop` makes it (the
        same key split, the same action): each pool entry computes only the moving games whose seat
        is its (:meth:`_entry_moves`)."""
        rows = jnp.arange(seats.shape[0])
        keys = jax.vmap(jax.random.split)(c.key)
        key, sub = keys[:, 0], keys[:, 1]
        actor = c.game.current_player
        entry = opponents[rows, jnp.maximum(actor, 0)]
        action = jnp.zeros(seats.shape[0], jnp.int32)
        for j, f in enumerate(self.opponents):
            action = self._entry_moves(f, jnp.logical_and(moving, entry == j), c.game, sub, action)
        game = jax.vmap(self.core.step)(c.game, action)
        game = jax.tree.map(lambda new, old: jnp.where(moving.reshape((-1,) + (1,) * (new.ndim - 1)), new, old),
                            game, c.game)  # fmt: skip
        earned = c.earned + jnp.where(moving, game.rewards[rows, seats], 0.0)
        return Carry(game, earned, jnp.where(moving[:, None], key, c.key), c.moves + moving.astype(jnp.int32))

    def _entry_moves(self, f: Opponent, need: jax.Array, games: Any, keys: jax.Array, action: jax.Array) -> jax.Array:
        """``action`` with policy ``f``'s moves where ``need``: ``f`` runs on the games that need it only, each
        seen by the seat to act, gathered :attr:`chunk` at a time (a network opponent that sits at a third of the
        tables would otherwise compute for the whole batch at every opponent's turn, and every game's observation
        would be computed at every turn)."""
        batch = need.shape[0]
        size = min(batch, self.chunk or max(1, batch // 4))
        chunks = -(-batch // size)
        rows = jnp.nonzero(need, size=chunks * size, fill_value=batch)[0]  # the games that need f, then "none"
        count = need.sum()

        def one(c: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
            i, a = c
            at = jax.lax.dynamic_slice(rows, (i * size,), (size,))
            take = jnp.minimum(at, batch - 1)  # the filler rows read the last game; their moves are dropped
            game = jax.tree.map(lambda x: x[take], games)
            obs = jax.vmap(self.core.observe)(game, game.current_player)
            moves = jax.vmap(f)(obs, jax.vmap(self.core.legal_mask)(game), keys[take]).astype(jnp.int32)
            return i + 1, a.at[at].set(moves, mode="drop")

        return jax.lax.while_loop(lambda c: c[0] * size < count, one, (jnp.int32(0), action))[1]

    def _waiting(self, game: Any, seat: jax.Array) -> jax.Array:
        """Whether an opponent is to move before ``seat`` acts: the game goes on, another seat is to act, and
        ``seat`` is not settled (one game)."""
        more = jnp.logical_and(jnp.logical_not(_over(game)), game.current_player != seat)
        return jnp.logical_and(more, jnp.logical_not(self._settled(game, seat)[0]))

    def _settled(self, game: Any, seat: jax.Array) -> tuple[jax.Array, jax.Array]:
        """``Core.settled`` where :attr:`settle` is on (else never settled, paying nothing)."""
        if self.settle and self.core.settled is not None:
            out, reward = self.core.settled(game, seat)
            return out, jnp.where(out, reward, jnp.float32(0.0))
        return jnp.bool_(False), jnp.float32(0.0)

    # ------------------------------------------------------------------------------------------- episodes
    def _deal(self, key: jax.Array) -> SeatState:
        """A new episode whose learner gets to act (deals again until it does)."""
        n = self.core.num_players

        def one(key: jax.Array) -> tuple[SeatState, jax.Array]:
            key, k_game, k_seat, k_opp, k_play = jax.random.split(key, 5)
            seat = jax.random.randint(k_seat, (), 0, n) if self.learner_seat is None else jnp.int32(self.learner_seat)
            size = len(self.groups)
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
            if self._sizes is not None and self._starts is not None:
                # an entry of slots plays one of them, drawn uniformly: the table's (one for all its seats) or each seat's
                table = self.opponent_draw == "table"
                k_slot = jax.random.fold_in(k_opp, 1)
                slot = jax.random.randint(
                    k_slot, () if table else (n,), 0, self._sizes[opponents[0] if table else opponents]
                )
                opponents = self._starts[opponents] + slot
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
        out, owed = self._settled(game, state.seat)
        nxt = jax.lax.cond(_over(game) | out, lambda: self._deal(k_next), lambda: carried)
        obs, mask = self._view(nxt)
        hint = self.core.hindsight(game, state.seat) if self.hindsight and self.core.hindsight else None
        return Transition(nxt, obs, mask, reward + owed, game.terminated | out, game.truncated, final, hint)

    def step_batch(self, states: SeatState, actions: jax.Array) -> Transition:
        """:meth:`step` of a batch of games (leading axis), equal to ``jax.vmap(step)`` but with the opponents'
        turns out of lock step (:meth:`_play_opponents_batch`) and dealing a new episode only in the games that
        ended (:func:`~parlour.envs.jax_core.reset_where`): a deal plays the opponents up to the learner's first
        move, far too dear to compute for every game at every step."""
        keys = jax.vmap(lambda k: jax.random.split(k, 3))(states.key)
        key, k_play, k_next = keys[:, 0], keys[:, 1], keys[:, 2]
        game = jax.vmap(self.core.step)(states.game, actions)
        rows = jnp.arange(actions.shape[0])
        earned = game.rewards[rows, states.seat]
        zero = jnp.zeros(actions.shape[0], jnp.float32)
        played = self._play_opponents_batch(
            Carry(game, zero, k_play, jnp.zeros(actions.shape[0], jnp.int32)), states.seat, states.opponents
        )
        game = played.game
        carried = states._replace(game=game, key=key)
        final = jax.vmap(self.core.observe)(game, states.seat)
        out, owed = jax.vmap(self._settled)(game, states.seat)
        nxt = reset_where(self._deal, carried, k_next, _over(game) | out)
        obs, mask = jax.vmap(self._view)(nxt)
        hint = jax.vmap(self.core.hindsight)(game, states.seat) if self.hindsight and self.core.hindsight else None
        reward = earned + played.earned + owed
        return Transition(nxt, obs, mask, reward, game.terminated | out, game.truncated, final, hint)

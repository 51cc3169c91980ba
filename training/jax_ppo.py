"""``trainer: jax``: PPO with action masking, end to end in JAX (PureJaxRL-style): the rollout of ``train.n_envs``
games on the game's JAX core, the batched bots in the other seats, GAE and every epoch of minibatch updates in one
compiled function per update; ``pip install parlour[jax]`` (JAX and Optax).

The same config sections as the SB3 trainer, read the same way: ``ppo`` (``n_steps`` per game per update,
``batch_size`` minibatches, ``n_epochs``, learning rate, ``gamma``, ``gae_lambda``, clip range, entropy and value
coefficients, global gradient-norm clip, ``net_arch`` and activation with separate policy and value networks, SB3's
orthogonal initialisation and Adam with ``eps=1e-5``; ``network: field_encoder`` puts the field encoder of
:mod:`parlour.baselines.field_net` -- a token per row of each observation field -- before those networks; advantages
normalised per minibatch; a truncated game's last reward bootstrapped with the value of its final observation),
``opponents`` (batched bots by their scalar names; ``self`` is the learner's current policy, so ``opponents: [self]``
is self-play with every seat the learner), the learning seat and ``opponent_draw``, ``train`` (budget, checkpoints,
periodic evaluations) and ``eval``.

The run folder matches the other trainers': ``checkpoints/latest/`` (a pickle-free checkpoint of
:mod:`parlour.training.checkpoints`, written atomically between two updates), ``evaluations.jsonl`` (periodic
evaluations in the scalar env, or on the JAX core with ``train.eval_backend: jax``: :mod:`parlour.training.jax_eval`),
``logs/session_K/progress.csv``, and ``policy.json`` + ``policy.safetensors``: the network in SB3's tensor names (a
field encoder in :mod:`~parlour.baselines.field_net`'s), so ``parlour evaluate``/``benchmark`` play it in the scalar
env like any policy file.

The checkpoint holds the whole :class:`TrainState` -- parameters, optimizer state, every game of the batch in
progress (the opponents drawn for it and its own PRNG key included), the learner's last observations and masks, and
the trainer's PRNG key -- with the step and the cadence of checkpoints and evaluations (the last step of each). The
update is one compiled function of that state alone, so ``--resume`` after a stop (SIGINT/SIGTERM: the update under
way finishes, then the checkpoint is written) or after a kill (from the last periodic checkpoint) continues exactly
where the checkpoint was: the parameters, the evaluations and the checkpoint steps equal a run that never stopped.
Only wall-clock fields (an evaluation's ``time``, the logs' elapsed seconds) and the session's log folders differ.

``opponent_sampling: prioritised`` (settings in ``sampling``: :class:`~parlour.training.config.SamplingConfig`) draws
each new episode's pool entry -- the table's, or each seat's under ``opponent_draw: seat`` -- with the probabilities of
:func:`draw_probabilities`: ``floor / K + (1 - floor) * softmax(loss_ema / temperature)`` over the ``K`` entries
(``self`` one of them), so the entries the learner loses to most are met most and none is starved. ``loss_ema`` is
held in :class:`TrainState` (``sampling``: so checkpoints and ``--resume`` carry it; it starts at 0.5 for every
entry, i.e. uniform) and is updated after each rollout by :func:`update_loss_ema` from the episodes that ended in it:
an episode counts for every entry that sat at its table (the entries the other seats were drawn with, kept in each
game's state), as a loss unless the learner's final reward -- the reward of the transition that ended it -- is
``> 0``. Under ``game.options.reward: win`` that is exactly "the learner did not win"; under another reward it is the
final reward's sign, and a truncated game (final reward 0 under ``win``) is a loss. Each update logs the
probabilities and the averages the next rollout uses to ``progress.csv`` as ``sampling/p_<entry>`` and
``sampling/loss_ema_<entry>``. ``uniform`` (the default) draws as it always did: the same keys, the same results.

``snapshots`` in ``opponents`` keeps the learner's past parameters in the training state: a ring of
``self_play.max_snapshots`` slots (:attr:`TrainState.snapshots`, every slot the initial parameters at first) that the
update writes its new parameters into every ``self_play.snapshot_every`` steps (rounded to whole updates, counted in
:attr:`TrainState.updates`), over the oldest. The ring is one entry of the pool
(:class:`~parlour.envs.jax_core.single_seat.Slots`): a table drawn for it plays one slot, drawn uniformly, for the
episode, its parameters played as ``self`` plays the current ones.
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from parlour.baselines import field_net
from parlour.baselines.policy_file import check_compatible, mlp_network, save_policy
from parlour.envs import make as make_env
from parlour.training.checkpoints import STATE_FILE, TENSORS_FILE, is_checkpoint, read_checkpoint, write_checkpoint
from parlour.training.config import SELF_PLAY, SNAPSHOTS, TrainConfig, encoder_network
from parlour.training.jax_eval import masked_logits
from parlour.training.policies import checkpoint_meta, training_record

if TYPE_CHECKING:
    import jax

    from parlour.training.run import Session


ALGORITHM = "PPO with action masking (Parlour's jitted JAX trainer)"
CHECKPOINT_DIR = "latest"
#: The checkpoint's layout: 2 holds the whole :class:`TrainState` by path and the cadence (a checkpoint without
#: ``format``, from an earlier Parlour, holds the parameters, the optimizer state and the key only).
STATE_FORMAT = 2
#: Config keys the compiled update does not read: PPOs of configs that differ only in these share their compilation.
_NOT_COMPILED = {
    "train": ("total_timesteps", "checkpoint_every", "eval_every", "eval_backend", "torch_threads"),
    "": ("eval", "seed"),
}


# ------------------------------------------------------------------------------------------------- the network
def _layers(params: dict[str, Any], part: str) -> int:
    return sum(1 for k in params if k.startswith(f"mlp_extractor.{part}.") and k.endswith(".weight"))


def init_params(key: jax.Array, obs_size: int, num_actions: int, net_arch: list[int]) -> dict[str, jax.Array]:
    """SB3's MLP actor-critic in its tensor names, initialised as SB3 does (orthogonal: gain sqrt(2) for hidden
    layers, 0.01 for the action head, 1 for the value head; zero biases)."""
    import jax
    import jax.numpy as jnp

    params: dict[str, jax.Array] = {}
    for part, head, out, gain in (("policy_net", "action_net", num_actions, 0.01), ("value_net", "value_net", 1, 1.0)):
        width = obs_size
        for i, w in enumerate(net_arch):
            key, sub = jax.random.split(key)
            params[f"mlp_extractor.{part}.{2 * i}.weight"] = jax.nn.initializers.orthogonal(math.sqrt(2))(
                sub, (w, width), jnp.float32
            )
            params[f"mlp_extractor.{part}.{2 * i}.bias"] = jnp.zeros((w,), jnp.float32)
            width = w
        key, sub = jax.random.split(key)
        params[f"{head}.weight"] = jax.nn.initializers.orthogonal(gain)(sub, (out, width), jnp.float32)
        params[f"{head}.bias"] = jnp.zeros((out,), jnp.float32)
    return params


def forward(params: dict[str, jax.Array], obs: jax.Array, activation: str) -> tuple[jax.Array, jax.Array]:
    """Action logits and value of a batch (or one) of observations."""
    logits, value, _ = forward_hidden(params, obs, activation)
    return logits, value


def forward_hidden(
    params: dict[str, jax.Array], obs: jax.Array, activation: str
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """:func:`forward`, and the policy network's last hidden layer (what the belief heads read)."""
    import jax.numpy as jnp

    act = jnp.tanh if activation == "tanh" else (lambda x: jnp.maximum(x, 0.0))
    out, hidden = [], obs
    for part, head in (("policy_net", "action_net"), ("value_net", "value_net")):
        x = obs
        for i in range(_layers(params, part)):
            x = act(x @ params[f"mlp_extractor.{part}.{2 * i}.weight"].T + params[f"mlp_extractor.{part}.{2 * i}.bias"])
        if part == "policy_net":
            hidden = x
        out.append(x @ params[f"{head}.weight"].T + params[f"{head}.bias"])
    return out[0], out[1][..., 0], hidden


def network_entry(cfg: TrainConfig) -> dict[str, Any]:
    """The policy file's ``network`` of a config: SB3's MLP actor-critic, or the field encoder over the token plan of
    the env's observation layout (``ppo.network: field_encoder``)."""
    if cfg.ppo.network == field_net.KIND:
        env = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
        return encoder_network(cfg, env.unwrapped.observation_layout)
    return mlp_network(list(cfg.ppo.net_arch), list(cfg.ppo.net_arch), cfg.ppo.activation)


# ------------------------------------------------------------------------------------------------- the algorithm
class Rollout(NamedTuple):
    obs: jax.Array
    mask: jax.Array
    action: jax.Array
    logp: jax.Array
    value: jax.Array
    reward: jax.Array
    done: jax.Array
    #: ``ppo.hindsight_coef > 0``: the core's hindsight of the game a step's episode ended in (its belief heads'
    #: target), and whether that episode ended within the rollout (the others' steps have no target); else ``None``.
    hint: jax.Array | None = None
    hint_valid: jax.Array | None = None


class TrainState(NamedTuple):
    params: dict[str, jax.Array]
    opt_state: Any
    games: Any  # the single-seat states of the batch
    obs: jax.Array
    mask: jax.Array
    key: jax.Array
    #: ``opponent_sampling: prioritised``: the moving average of the learner's loss rate per pool entry (``[K]``
    #: float32); ``None`` (no array: the checkpoint is as before) under ``uniform``.
    sampling: jax.Array | None = None
    #: ``opponents`` lists ``snapshots``: the ring of the learner's past parameters (each leaf ``[max_snapshots,
    #: ...]``, every slot the initial parameters until its first snapshot) and the number of updates done (``[]``
    #: int32: when the next snapshot falls, and in which slot); ``None`` otherwise (the checkpoint is as before).
    snapshots: dict[str, jax.Array] | None = None
    updates: jax.Array | None = None


#: What a policy trained with belief heads says of them in its file (the family's description).
HINDSIGHT_NOTE = (
    ", with belief heads: training-time targets from the end-of-game reveal (the outcome every seat receives); the "
    "policy acts on its observation alone"
)
#: The belief heads' tensors (``<name>.weight``, ``<name>.bias``) in the parameters; never exported.
HINDSIGHT_HEAD = "hindsight_head"


def backfill(hint: jax.Array, done: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Per step of a rollout (``[T, B, ...]``), the hindsight of the episode it belongs to -- read where that
    episode ended -- and whether it ended within the rollout: a reverse scan that takes a step's own hindsight where
    the step ended its episode and the next step's target otherwise (the next step is the same episode)."""
    import jax
    import jax.numpy as jnp

    def back(carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, jax.Array]) -> tuple[Any, Any]:
        target, valid = carry
        h, d = x
        target = jnp.where(d[:, None], h, target)
        valid = jnp.logical_or(d, valid)
        return (target, valid), (target, valid)

    start = (jnp.zeros_like(hint[0]), jnp.zeros(done.shape[1], bool))
    _, (targets, valid) = jax.lax.scan(back, start, (hint, done), reverse=True)
    return targets, valid


#: The loss rate every pool entry starts from under prioritised sampling (equal: the first draws are uniform).
INITIAL_LOSS_RATE = 0.5


class Collected(NamedTuple):
    """A rollout and the batch's state after it: what :meth:`PPO._learn` takes from :meth:`PPO._rollout`."""

    games: Any
    obs: Any
    mask: Any
    key: Any
    roll: Rollout
    ended: Any
    counts: Any


def draw_probabilities(loss_ema: jax.Array, temperature: float, floor: float) -> jax.Array:
    """Each pool entry's probability per draw: ``floor / K + (1 - floor) * softmax(loss_ema / temperature)`` --
    the entries the learner loses to most drawn most, none under ``floor / K``."""
    import jax
    import jax.numpy as jnp

    loss_ema = jnp.asarray(loss_ema, jnp.float32)
    size = loss_ema.shape[-1]
    return floor / size + (1.0 - floor) * jax.nn.softmax(loss_ema / temperature, axis=-1)


def update_loss_ema(loss_ema: jax.Array, losses: jax.Array, episodes: jax.Array, smoothing: float) -> jax.Array:
    """The moving averages after a rollout in which ``episodes[k]`` games at entry ``k``'s tables ended,
    ``losses[k]`` of them lost: each entry with an ended game moves ``smoothing`` of the way toward its loss rate in
    the rollout; an entry with none keeps its average."""
    import jax.numpy as jnp

    loss_ema, losses, episodes = (jnp.asarray(x, jnp.float32) for x in (loss_ema, losses, episodes))
    rate = losses / jnp.maximum(episodes, 1.0)
    return jnp.where(episodes > 0, loss_ema + smoothing * (rate - loss_ema), loss_ema)


def sampling_columns(names: list[str]) -> list[str]:
    """The pool entries' names as ``progress.csv`` columns name them (an entry listed twice gets its index)."""
    return [f"{n}_{i}" if names.count(n) > 1 else n for i, n in enumerate(names)]


class PPO:
    """The compiled update of one config: ``reset(key)`` starts the batch of games, ``update(state)`` collects
    ``n_steps`` per game and learns from them.

    A PPO holds no training state (that is all in :class:`TrainState`): two of configs that compile the same
    (:data:`_NOT_COMPILED` aside) are equal, so they share one compilation in a process (a resume in the same
    process, the tests)."""

    def __init__(self, cfg: TrainConfig) -> None:
        import optax

        from parlour.baselines.jax_bots import bot
        from parlour.envs.jax_core import make_core

        self.cfg = cfg
        self.core = make_core(cfg.game.name, cfg.game.num_players, **cfg.game.options)
        #: The field encoder's ``network`` entry (its token plan inside); ``None``: the MLP.
        self.encoder: dict[str, Any] | None = None
        if cfg.ppo.network == field_net.KIND:
            self.encoder = network_entry(cfg)
            # the core's observation is the scalar env's vector, so the env's layout cuts it into tokens
            covered = sum(t["rows"] * t["width"] for t in self.encoder["tokens"])
            if covered != self.core.obs_size:
                raise ValueError(
                    f"{cfg.game.name}: the JAX core's observation has {self.core.obs_size} entries, the env's layout "
                    f"{covered}: the field encoder's tokens would not fit it"
                )
        #: The pool by entry: a batched bot, ``None`` for ``self`` (the current parameters), or ``snapshots`` (the
        #: ring of past parameters: one entry, a slot drawn per episode).
        self.bots: list[Any] = [
            None if name == SELF_PLAY else name if name == SNAPSHOTS else bot(name, cfg.game.name)
            for name in cfg.opponents
        ]
        self.snapshots = SNAPSHOTS in cfg.opponents
        #: Updates between two snapshots: ``self_play.snapshot_every`` steps, rounded to whole updates (at least one).
        self.snapshot_updates = max(1, round(cfg.self_play.snapshot_every / (cfg.ppo.n_steps * cfg.train.n_envs)))
        #: ``ppo.hindsight_coef > 0``: belief heads predict the core's hindsight (the end-of-game reveal) at every
        #: step: a training target only, never an input (the exported policy file has no head).
        self.hindsight = cfg.ppo.hindsight_coef > 0
        if self.hindsight and self.core.hindsight is None:
            raise ValueError(f"{cfg.game.name}: the JAX core has no hindsight targets: set ppo.hindsight_coef=0")
        self.blocks = self.core.hindsight_blocks if self.hindsight else ()
        seat = cfg.learner.seat
        self.learner_seat = None if seat == "random" else int(seat)
        #: ``opponent_sampling: prioritised``: the draws follow the loss rates kept in ``TrainState.sampling``.
        self.prioritised = cfg.opponent_sampling == "prioritised"
        ppo = cfg.ppo
        self.tx = optax.chain(optax.clip_by_global_norm(ppo.max_grad_norm), optax.adam(ppo.learning_rate, eps=1e-5))
        self.batch = ppo.n_steps * cfg.train.n_envs
        self.steps_per_update = self.batch
        compiled = asdict(cfg)
        for section, keys in _NOT_COMPILED.items():
            for k in keys:
                (compiled[section] if section else compiled).pop(k)
        self._compiled = json.dumps(compiled, sort_keys=True, default=str)
        self.update: Callable[[TrainState], tuple[TrainState, dict[str, jax.Array]]] = functools.partial(
            _jitted("_update"), self
        )
        self.reset: Callable[[dict[str, jax.Array], Any, jax.Array], TrainState] = functools.partial(
            _jitted("_reset"), self
        )

    def __eq__(self, other: object) -> bool:
        return getattr(other, "_compiled", None) == self._compiled

    def __hash__(self) -> int:
        return hash(self._compiled)

    def apply(self, params: dict[str, jax.Array], obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Action logits and value of a batch (or one) of observations, by the config's network."""
        logits, value, _ = self.apply_hidden(params, obs)
        return logits, value

    def apply_hidden(self, params: dict[str, jax.Array], obs: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """:meth:`apply`, and the policy trunk's last hidden layer (the belief heads' input)."""
        if self.encoder is None:
            return forward_hidden(params, obs, self.cfg.ppo.activation)
        import jax.numpy as jnp

        logits, value, hidden = field_net.forward_hidden(jnp, params, obs, self.encoder["tokens"], self.encoder)
        return logits, value, hidden

    def hindsight_loss(self, params: dict[str, jax.Array], hidden: jax.Array, r: Rollout) -> jax.Array:
        """The belief heads' loss on a minibatch: per block of the core's hindsight, the cross-entropy of a softmax
        (``class``) or of a sigmoid per entry (``binary``), summed over blocks, averaged over the samples whose
        episode ended within the rollout (the others have no target)."""
        import jax
        import jax.numpy as jnp

        logits = hidden @ params[f"{HINDSIGHT_HEAD}.weight"].T + params[f"{HINDSIGHT_HEAD}.bias"]
        per_sample = jnp.zeros(logits.shape[0], jnp.float32)
        at = 0
        for _, size, kind in self.blocks:
            z, y = logits[:, at : at + size], r.hint[:, at : at + size]  # type: ignore[index]
            at += size
            if kind == "class":
                per_sample = per_sample - jnp.sum(y * jax.nn.log_softmax(z), axis=-1)
            else:
                bce = jnp.maximum(z, 0.0) - z * y + jnp.log1p(jnp.exp(-jnp.abs(z)))
                per_sample = per_sample + jnp.sum(bce, axis=-1)
        valid = r.hint_valid.astype(jnp.float32)  # type: ignore[union-attr]
        return jnp.sum(per_sample * valid) / jnp.maximum(valid.sum(), 1.0)

    def _probs(self, loss_ema: jax.Array | None) -> jax.Array | None:
        """The draw probabilities of the pool under prioritised sampling (``None``: uniform)."""
        if not self.prioritised or loss_ema is None:
            return None
        return draw_probabilities(loss_ema, self.cfg.sampling.temperature, self.cfg.sampling.floor)

    def _seat(
        self,
        params: dict[str, jax.Array],
        probs: jax.Array | None = None,
        snapshots: dict[str, jax.Array] | None = None,
    ) -> Any:
        """The single-seat env whose ``self`` opponents play ``params`` and whose snapshot entries play their slot of
        ``snapshots`` (sampling, as the learner does), drawing its pool entries with ``probs`` (``None``: uniformly)."""
        import jax

        from parlour.envs.jax_core.single_seat import SingleSeat, Slots

        def playing(weights: dict[str, jax.Array]) -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
            def act(obs: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
                logits, _ = self.apply(weights, obs)
                return jax.random.categorical(key, masked_logits(logits, mask)).astype("int32")

            return act

        def slot_of(obs: jax.Array, mask: jax.Array, key: jax.Array, slot: Any) -> jax.Array:
            return playing(jax.tree_util.tree_map(lambda leaf: leaf[slot], snapshots))(obs, mask, key)

        pool: list[Any] = []
        for b in self.bots:
            if isinstance(b, str):  # the ring (snapshots): one entry of the draw, each slot computed on its own games
                if snapshots is None:
                    raise ValueError("the snapshots entry needs the snapshot ring")
                pool.append(Slots(slot_of, self.cfg.self_play.max_snapshots))
            else:
                pool.append(playing(params) if b is None else b)
        return SingleSeat(
            self.core,
            pool,
            learner_seat=self.learner_seat,
            opponent_draw=self.cfg.opponent_draw,
            draw_probs=probs,
            hindsight=self.hindsight,
            # a learner out of the game (Lady Alice's false accuser) ends its episode there: the same transitions
            settle=True,
        )

    def init(self, key: jax.Array) -> TrainState:
        import jax

        k_params, k_games = jax.random.split(key)
        if self.encoder is not None:
            params = field_net.init_params(k_params, self.encoder["tokens"], self.encoder, self.core.num_actions)
        else:
            params = init_params(k_params, self.core.obs_size, self.core.num_actions, list(self.cfg.ppo.net_arch))
        if self.hindsight:
            # a linear head per run on the policy trunk's last layer, initialised as SB3's action head (gain 0.01)
            width = jax.eval_shape(self.apply_hidden, params, jax.ShapeDtypeStruct((1, self.core.obs_size), "float32"))
            size = sum(b[1] for b in self.blocks)
            k_params, sub = jax.random.split(k_params)
            params = {
                **params,
                f"{HINDSIGHT_HEAD}.weight": jax.nn.initializers.orthogonal(0.01)(sub, (size, width[2].shape[-1])),
                f"{HINDSIGHT_HEAD}.bias": jax.numpy.zeros((size,), "float32"),
            }
        return self.reset(params, self.tx.init(params), k_games)

    def _reset(self, params: dict[str, jax.Array], opt_state: Any, key: jax.Array) -> TrainState:
        import jax
        import jax.numpy as jnp

        loss_ema = jnp.full((len(self.bots),), INITIAL_LOSS_RATE, jnp.float32) if self.prioritised else None
        ring = updates = None
        if self.snapshots:  # every slot starts as the initial parameters
            size = self.cfg.self_play.max_snapshots
            ring = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (size, *leaf.shape)), params)
            updates = jnp.zeros((), jnp.int32)
        key, sub = jax.random.split(key)
        seat = self._seat(params, self._probs(loss_ema), ring)
        games, obs, mask = jax.vmap(seat.reset)(jax.random.split(sub, self.cfg.train.n_envs))
        return TrainState(params, opt_state, games, obs, mask, key, loss_ema, ring, updates)

    def _update(self, state: TrainState) -> tuple[TrainState, dict[str, jax.Array]]:
        """One update: the rollout, then the epochs of minibatch steps on it (one compiled function)."""
        return self._learn(state, self._rollout(state))

    def _rollout(self, state: TrainState) -> Collected:
        """``n_steps`` moves of the learner in each of the batch's games, the opponents' moves between them."""
        import jax
        import jax.numpy as jnp

        ppo = self.cfg.ppo
        seat = self._seat(state.params, self._probs(state.sampling), state.snapshots)
        step = seat.step_batch
        pool = len(self.bots)

        def tally(games: Any, done: jax.Array, reward: jax.Array) -> tuple[jax.Array, jax.Array]:
            """Per pool entry: the games that ended at its tables this step, and how many of them the learner lost
            (its final reward not > 0). An entry counts once per game however many seats it filled."""
            others = jnp.arange(self.core.num_players)[None, :] != games.seat[:, None]
            entry = jnp.asarray(seat.entry_of)[games.opponents]  # a ring's slots count for its one entry
            present = jnp.max(jax.nn.one_hot(entry, pool) * others[..., None], axis=1)
            ended = done.astype(jnp.float32)[:, None] * present
            return ended.sum(0), (ended * jnp.where(reward > 0, 0.0, 1.0)[:, None]).sum(0)

        def collect(carry: tuple[Any, ...], _: Any) -> tuple[tuple[Any, ...], tuple[Rollout, jax.Array, Any]]:
            games, obs, mask, key = carry
            key, sub = jax.random.split(key)
            logits, value = self.apply(state.params, obs)
            logits = masked_logits(logits, mask)
            action = jax.random.categorical(sub, logits).astype(jnp.int32)
            logp = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]
            t = step(games, action)
            # a truncated game's value is not zero: bootstrap it from its final observation, as SB3 does
            # (the network runs on the final observations only in a step where some game was truncated: rare)
            final_value = jax.lax.cond(
                t.truncated.any(),
                lambda o: self.apply(state.params, o)[1],
                lambda o: jnp.zeros(o.shape[0], jnp.float32),
                t.final_observation,
            )
            reward = t.reward + ppo.gamma * jnp.where(t.truncated, final_value, 0.0)
            done = jnp.logical_or(t.terminated, t.truncated)
            # the games' states before the step hold the entries each ended game was drawn with
            counts = tally(games, done, t.reward) if self.prioritised else None
            return (t.state, t.observation, t.mask, key), (
                Rollout(obs, mask, action, logp, value, reward, done, t.hindsight),
                jnp.where(done, 1.0, 0.0),
                counts,
            )

        (games, obs, mask, key), (roll, ended, counts) = jax.lax.scan(
            collect, (state.games, state.obs, state.mask, state.key), None, length=ppo.n_steps
        )
        if self.hindsight and roll.hint is not None:
            targets, valid = backfill(roll.hint, roll.done)
            roll = roll._replace(hint=targets, hint_valid=valid)
        return Collected(games, obs, mask, key, roll, ended, counts)

    def _learn(self, state: TrainState, c: Collected) -> tuple[TrainState, dict[str, jax.Array]]:
        """GAE over a rollout, then ``n_epochs`` of shuffled minibatch steps on it."""
        import jax
        import jax.numpy as jnp
        import optax

        ppo = self.cfg.ppo
        games, obs, mask, key, roll, ended, counts = c
        _, last_value = self.apply(state.params, obs)

        def gae(carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, ...]) -> tuple[Any, jax.Array]:
            advantage, next_value = carry
            reward, value, done = x
            delta = reward + ppo.gamma * next_value * (1.0 - done) - value
            advantage = delta + ppo.gamma * ppo.gae_lambda * (1.0 - done) * advantage
            return (advantage, value), advantage

        _, advantages = jax.lax.scan(
            gae,
            (jnp.zeros_like(last_value), last_value),
            (roll.reward, roll.value, roll.done.astype(jnp.float32)),
            reverse=True,
        )
        returns = advantages + roll.value
        flat = jax.tree_util.tree_map(lambda x: x.reshape((self.batch, *x.shape[2:])), (roll, advantages, returns))

        def loss(params: dict[str, jax.Array], mb: tuple[Rollout, jax.Array, jax.Array]) -> tuple[jax.Array, Any]:
            r, adv, ret = mb
            logits, value, hidden = self.apply_hidden(params, r.obs)
            logp_all = jax.nn.log_softmax(masked_logits(logits, r.mask))
            logp = logp_all[jnp.arange(r.action.shape[0]), r.action]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            ratio = jnp.exp(logp - r.logp)
            pg = -jnp.minimum(adv * ratio, adv * jnp.clip(ratio, 1 - ppo.clip_range, 1 + ppo.clip_range)).mean()
            probs = jnp.exp(logp_all)
            entropy = -jnp.sum(jnp.where(r.mask, probs * logp_all, 0.0), axis=-1).mean()
            value_loss = jnp.mean((ret - value) ** 2)
            total = pg - ppo.ent_coef * entropy + ppo.vf_coef * value_loss
            belief = self.hindsight_loss(params, hidden, r) if self.hindsight else jnp.float32(0.0)
            return total + ppo.hindsight_coef * belief, (pg, value_loss, entropy, belief)

        grad = jax.grad(loss, has_aux=True)
        minibatches = self.batch // ppo.batch_size

        def epoch(carry: tuple[Any, Any, jax.Array], _: Any) -> tuple[tuple[Any, Any, jax.Array], Any]:
            params, opt_state, key = carry
            key, sub = jax.random.split(key)
            order = jax.random.permutation(sub, self.batch)[: minibatches * ppo.batch_size]
            shuffled = jax.tree_util.tree_map(
                lambda x: x[order].reshape((minibatches, ppo.batch_size, *x.shape[1:])), flat
            )

            def minibatch(carry: tuple[Any, Any], mb: Any) -> tuple[tuple[Any, Any], Any]:
                params, opt_state = carry
                g, aux = grad(params, mb)
                updates, opt_state = self.tx.update(g, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), aux

            (params, opt_state), aux = jax.lax.scan(minibatch, (params, opt_state), shuffled)
            return (params, opt_state, key), aux

        (params, opt_state, key), aux = jax.lax.scan(
            epoch, (state.params, state.opt_state, key), None, length=ppo.n_epochs
        )
        episodes = ended.sum()
        metrics = {
            "episodes": episodes,
            "episode_reward_mean": jnp.where(episodes > 0, roll.reward.sum() / jnp.maximum(episodes, 1.0), jnp.nan),
            "policy_loss": aux[0].mean(),
            "value_loss": aux[1].mean(),
            "entropy": aux[2].mean(),
            "hindsight_loss": aux[3].mean(),
        }
        loss_ema = state.sampling
        if self.prioritised and loss_ema is not None:
            episodes_k, losses_k = counts[0].sum(0), counts[1].sum(0)
            loss_ema = update_loss_ema(loss_ema, losses_k, episodes_k, self.cfg.sampling.smoothing)
            metrics["sampling_probs"] = self._probs(loss_ema)
            metrics["sampling_loss_ema"] = loss_ema
        ring, updates = state.snapshots, state.updates
        if ring is not None and updates is not None:
            ring, updates = self._snapshot(ring, updates, params)
        return TrainState(params, opt_state, games, obs, mask, key, loss_ema, ring, updates), metrics

    def _snapshot(
        self, ring: dict[str, jax.Array], updates: jax.Array, params: dict[str, jax.Array]
    ) -> tuple[dict[str, jax.Array], jax.Array]:
        """After update number ``updates + 1``: every ``snapshot_updates``-th one writes the new parameters into the
        ring's next slot (the oldest snapshot goes; slot ``k % max_snapshots`` holds the ``k``-th snapshot)."""
        import jax
        import jax.numpy as jnp

        updates = updates + 1
        due = updates % self.snapshot_updates == 0
        slot = (updates // self.snapshot_updates - 1) % self.cfg.self_play.max_snapshots
        ring = jax.tree_util.tree_map(lambda old, new: old.at[slot].set(jnp.where(due, new, old[slot])), ring, params)
        return ring, updates


@functools.cache
def _jitted(method: str) -> Callable[..., Any]:
    """``PPO.<method>`` compiled with the PPO as a static argument: JAX keys its cache on the PPO's config."""
    import jax

    def call(ppo: PPO, *args: Any) -> Any:
        return getattr(ppo, method)(*args)

    return jax.jit(call, static_argnums=0)


# ------------------------------------------------------------------------------------------------- the run
def _tensors(params: dict[str, Any]) -> dict[str, np.ndarray]:
    """The policy's tensors: the belief heads are left out (training only: the policy acts without them)."""
    return {k: np.asarray(v, np.float32) for k, v in params.items() if not k.startswith(f"{HINDSIGHT_HEAD}.")}


def export(params: dict[str, Any], path: Path, cfg: TrainConfig, meta: dict[str, Any], record: dict[str, Any]) -> Path:
    """The network as a safe policy file (SB3's ``MlpPolicy`` tensor names, or the field encoder's: the scalar env
    plays it)."""
    network = network_entry(cfg)
    return save_policy(path, _tensors(params), {**meta, "network": network, "training": record})


def _by_path(tree: Any) -> tuple[dict[str, Any], Any]:
    """The leaves of a pytree by their path (``.params['action_net.bias']``, ``.games.game.hands``...) and its
    structure."""
    import jax

    leaves, treedef = jax.tree_util.tree_flatten_with_path(tree)
    return {jax.tree_util.keystr(path): leaf for path, leaf in leaves}, treedef


def _save(state: TrainState, run: Path, meta: dict[str, Any], steps: int, marks: dict[str, int]) -> Path:
    """The whole training state (see the module's doc) and the cadence ``marks``, as the resume checkpoint."""
    # every leaf is a plain array (the keys are raw uint32 keys, not typed ones, which have no NumPy dtype)
    arrays = {name: np.asarray(leaf) for name, leaf in _by_path(state)[0].items()}
    tree = {"format": STATE_FORMAT, "state": arrays, "marks": dict(marks)}
    return write_checkpoint(run / "checkpoints" / CHECKPOINT_DIR, meta | {"timesteps": steps, "trainer": "jax"}, tree)


def _fit(saved: dict[str, Any], template: Any, prefix: str, source: Path) -> Any:
    """``template`` (a pytree of shapes and dtypes) filled with the arrays of ``saved`` named by their paths under
    ``prefix``: every array present, of the template's shape and dtype, and none more; else one line naming
    ``source`` and the array."""
    import jax.numpy as jnp

    from parlour.training.run import RunError

    expected, treedef = _by_path(template)
    expected = {prefix + name: leaf for name, leaf in expected.items()}
    missing = [name for name in expected if name not in saved]
    extra = [name for name in saved if name not in expected]
    if missing or extra:
        what = f"lacks the array {missing[0]}" if missing else f"holds an array {extra[0]} that the run's state has not"
        raise RunError(f"{source}: the checkpoint {what} (it was written for another config or damaged)")
    leaves = []
    for name, want in expected.items():
        got = saved[name]
        if isinstance(got, np.ndarray) and want.shape == () and got.shape == (1,):
            got = got.reshape(())  # a checkpoint keeps a scalar (Adam's count) as an array of one
        if not isinstance(got, np.ndarray) or got.dtype != want.dtype or got.shape != want.shape:
            kind = f"{got.dtype} {list(got.shape)}" if isinstance(got, np.ndarray) else f"a {type(got).__name__}"
            raise RunError(
                f"{source}: {name} is {kind}; the run's state holds {np.dtype(want.dtype)} {list(want.shape)} there "
                "(the checkpoint was written for another config or damaged)"
            )
        leaves.append(jnp.asarray(got))
    return treedef.unflatten(leaves)


def _marks(tree: dict[str, Any], steps: int, source: Path) -> dict[str, int]:
    """The cadence saved in a checkpoint: the steps of the last periodic checkpoint and of the last periodic
    evaluation, the multiple of ``train.eval_every`` that evaluation fell past (none of them past the checkpoint's
    step), and ``train.eval_every`` when it was written."""
    from parlour.training.run import RunError

    marks = tree.get("marks")
    if not isinstance(marks, dict):
        raise RunError(f"{source}: marks must be an object of the last checkpoint and evaluation steps")
    keys = ("checkpoint", "evaluation", "eval_base", "eval_every")
    for key, top in zip(keys, (steps, steps, steps, 2**63 - 1), strict=True):
        value = marks.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise RunError(f"{source}: marks.{key} must be an integer in [0, {top}], got {value!r}")
    return {k: int(marks[k]) for k in keys}


def _restore(ppo: PPO, folder: Path, meta: dict[str, Any], seed: int) -> tuple[TrainState, int, dict[str, int]]:
    """The training state, step and cadence marks of the checkpoint in ``folder``, every array checked against the
    state this config builds (its shape and dtype)."""
    import jax

    from parlour.training.run import RunError

    saved, tree = read_checkpoint(folder)
    check_compatible(saved, meta, str(folder))
    steps = int(saved["timesteps"])
    # the shapes and dtypes of a fresh state, traced but not run
    template = jax.eval_shape(ppo.init, jax.random.PRNGKey(seed))
    tensors = folder / TENSORS_FILE
    if not isinstance(tree, dict):
        raise RunError(f"{folder / STATE_FILE}: the state must be a JSON object, got a {type(tree).__name__}")
    if "format" not in tree and "params" in tree:
        return _restore_earlier(ppo, folder, tree, template, steps, seed)
    if tree.get("format") != STATE_FORMAT or not isinstance(tree.get("state"), dict):
        raise RunError(
            f"{folder / STATE_FILE}: format {tree.get('format')!r} with a state object is not a jax trainer's "
            f"checkpoint this Parlour reads (expected format {STATE_FORMAT})"
        )
    state = _fit(tree["state"], template, "", tensors)
    return state, steps, _marks(tree, steps, folder / STATE_FILE)


def _restore_earlier(
    ppo: PPO, folder: Path, tree: dict[str, Any], template: TrainState, steps: int, seed: int
) -> tuple[TrainState, int, dict[str, int]]:
    """A checkpoint of an earlier Parlour (parameters, optimizer state and key only): the games in progress were
    not saved, so the run continues on fresh deals from its step (the same on every resume from it) and no longer
    equals a run that never stopped; the checkpoint cadence restarts there, the evaluations keep their multiples."""
    import jax

    from parlour.training.run import RunError

    tensors = folder / TENSORS_FILE
    params_in, opt_in = tree.get("params"), tree.get("opt_state")
    if not isinstance(params_in, dict) or not isinstance(opt_in, list):
        raise RunError(f"{folder / STATE_FILE}: params must be an object and opt_state a list of arrays")
    opt_names = list(_by_path(template.opt_state)[0])
    if len(opt_in) != len(opt_names):
        raise RunError(f"{tensors}: opt_state holds {len(opt_in)} arrays; the run's optimizer has {len(opt_names)}")
    params = _fit({f"[{k!r}]": v for k, v in params_in.items()}, template.params, "", tensors)
    opt_state = _fit(dict(zip(opt_names, opt_in, strict=True)), template.opt_state, "", tensors)
    print(
        f"{folder} holds no games in progress (an earlier Parlour wrote it): the run continues on fresh deals from "
        f"step {steps:,}",
        flush=True,
    )
    key = jax.random.PRNGKey(int(np.random.SeedSequence([seed, steps]).generate_state(1)[0]))
    # the cadence restarts here: the next checkpoint a checkpoint_every on, the evaluations on the multiples
    marks = {"checkpoint": steps, "evaluation": steps, "eval_base": steps, "eval_every": -1}
    return ppo.reset(params, opt_state, key), steps, marks


def jax_periodic_evaluation(
    ppo: PPO, params: dict[str, Any], cfg: TrainConfig, run: Path, steps: int
) -> dict[str, Any]:
    """``train.eval_backend: jax``: the periodic evaluation at step ``steps`` played on the JAX core
    (:func:`parlour.training.jax_eval.jax_evaluation`: ``eval.periodic_games`` deals × each seat against each of
    ``eval.opponents``, on a key of the run's seed and the step that training never draws from), appended to
    ``evaluations.jsonl`` in the scalar evaluation's shape with ``"backend": "jax"``; returns the row."""
    from parlour.envs.fileio import append_text
    from parlour.training.jax_eval import evaluation_key, jax_evaluation

    games = cfg.eval.periodic_games * cfg.game.num_players
    tables = jax_evaluation(ppo, params, cfg.eval.opponents, games, evaluation_key(cfg.seed, steps))
    row: dict[str, Any] = {"timesteps": steps, "time": time.time(), "backend": "jax"}
    for name in cfg.eval.opponents:
        row[name] = {k: tables[name][k] for k in ("games", "win_rate", "win_ci", "mean_reward")}
    append_text(run / "evaluations.jsonl", json.dumps(row) + "\n")
    return row


class _JaxLearner:
    """The jitted PPO as :func:`parlour.training.session.run_session` drives it."""

    trainer = "jax"

    def __init__(
        self, cfg: TrainConfig, run: Path, ppo: PPO, state: TrainState, steps: int, meta: dict[str, Any]
    ) -> None:
        self.cfg, self.run, self.ppo, self.state, self.steps, self.meta = cfg, run, ppo, state, steps, meta
        self.entries = sampling_columns(list(cfg.opponents)) if ppo.prioritised else []
        self.header = ["time/total_timesteps", "rollout/ep_rew_mean", "train/entropy_loss", "time/time_elapsed"]
        self.header += [f"sampling/p_{e}" for e in self.entries] + [f"sampling/loss_ema_{e}" for e in self.entries]
        self.header += ["train/hindsight_loss"] if ppo.hindsight else []
        self.first_update: float | None = None
        self.first_done: float | None = None

    def behaviour_clone(self, stop: Any) -> dict[str, Any] | None:
        return None  # the trainer's check refuses a teacher: nothing to clone

    def begin(self, folder: Path, progress: Any) -> None:
        pass  # the session writes the log from update's rows

    def update(self, started: float, within: Any) -> tuple[int, list[Any]]:
        import jax

        began = time.perf_counter()
        self.state, metrics = self.ppo.update(self.state)
        self.steps += self.ppo.steps_per_update
        if self.first_update is None:  # compiling is in the first update: kept apart for the bench
            jax.block_until_ready(self.state)
            self.first_done = time.perf_counter()
            self.first_update = self.first_done - began
        line: list[Any] = [
            float(metrics["episode_reward_mean"]),
            -float(metrics["entropy"]),
            round(time.perf_counter() - started, 1),
        ]
        if self.entries:
            line += [float(x) for x in np.asarray(metrics["sampling_probs"])]
            line += [float(x) for x in np.asarray(metrics["sampling_loss_ema"])]
        if self.ppo.hindsight:
            line.append(float(metrics["hindsight_loss"]))
        return self.steps, line

    def save(self, steps: int, marks: dict[str, int]) -> None:
        _save(self.state, self.run, self.meta, steps, marks)

    def evaluate(self, steps: int) -> dict[str, Any]:
        from parlour.training import session

        if self.cfg.train.eval_backend == "jax":
            return jax_periodic_evaluation(self.ppo, self.state.params, self.cfg, self.run, steps)
        record = training_record(self.meta, steps)
        return session.exported_evaluation(
            self.cfg, self.run, steps, lambda path: export(self.state.params, path, self.cfg, self.meta, record)
        )

    def export(self, path: Path, steps: int, train_wall: float) -> None:
        from parlour.training.run import evaluations

        algorithm = ALGORITHM + (HINDSIGHT_NOTE if self.ppo.hindsight else "")
        record = training_record(
            self.meta, steps, algorithm=algorithm, evaluations=evaluations(self.run), train_wall_seconds=train_wall
        )
        export(self.state.params, path, self.cfg, self.meta, record)

    def finish(self, session_steps: int, started: float, wall: float) -> dict[str, Any]:
        spu, done = self.ppo.steps_per_update, self.first_done
        return {
            # the first update's seconds hold the compilation; the rate after it is the steady one
            "first_update_seconds": self.first_update,
            "steady_steps_per_second": (session_steps - spu) / (started + wall - done)
            if done is not None and session_steps > spu and started + wall > done
            else None,
        }

    def close(self) -> None:
        pass  # nothing held outside the process's memory


def train_jax(cfg: TrainConfig, run: Path, session: Session) -> dict[str, Any]:
    """The jitted trainer's session: the run's PPO state, new or resumed from its checkpoint, through the one session
    loop (:func:`parlour.training.session.run_session`)."""
    import jax

    from parlour.training.session import new_marks, run_session

    probe = make_env(cfg.game.name, num_players=cfg.game.num_players, **cfg.game.options)
    meta = checkpoint_meta(probe, {"config": json.loads(json.dumps(asdict(cfg))), "trainer": "jax"})
    ppo = PPO(cfg)
    latest = run / "checkpoints" / CHECKPOINT_DIR
    if session.resume and is_checkpoint(latest):
        state, steps, marks = _restore(ppo, latest, meta, cfg.seed)
    else:
        state, steps, marks = ppo.init(jax.random.PRNGKey(cfg.seed)), 0, new_marks(0, cfg.train.eval_every)
    return run_session(cfg, run, _JaxLearner(cfg, run, ppo, state, steps, meta), steps, marks, session)

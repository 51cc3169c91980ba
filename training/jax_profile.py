"""Where the jitted trainer's time goes: ``parlour bench --train CONFIG --profile``.

Per config (``trainer: jax`` is set for it), the update of :class:`parlour.training.jax_ppo.PPO` is timed in its parts,
each compiled on its own and run ``updates`` times after a first, compiling call:

- ``env``: the same ``n_steps`` x ``n_envs`` learner moves with a uniformly random legal action instead of the
  network -- the game's core and the batched bots in the other seats alone;
- ``rollout``: the rollout as the trainer collects it (the network's forward pass in every learner move, and in every
  ``self`` seat);
- ``learn``: GAE and ``n_epochs`` x ``n_steps * n_envs / batch_size`` minibatch steps on that rollout;
- ``update``: the fused update the trainer runs (rollout and learning in one compiled function), whose learner steps
  per second is the trainer's steady rate (the periodic evaluations and checkpoints aside).

The figures are wall-clock seconds on this machine with JAX's default threads; the process should have the machine
to itself (the bench does not start anything beside it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

#: What each profile row holds, in the order printed.
COLUMNS = (
    "config",
    "network",
    "batch",
    "epochs x minibatches",
    "compile s",
    "env s",
    "rollout s",
    "learn s",
    "update s",
    "steps/s",
)


def _timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """The first call's seconds (the compilation in it) and the mean of ``repeats`` calls after it."""
    import jax

    began = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - began
    began = time.perf_counter()
    for _ in range(repeats):
        jax.block_until_ready(fn())
    return first, (time.perf_counter() - began) / repeats


def profile_config(config: str, overrides: Sequence[str] = (), updates: int = 3) -> dict[str, Any]:
    """One row of :data:`COLUMNS` for ``config`` with ``overrides`` (``trainer: jax`` forced)."""
    import jax
    import jax.numpy as jnp

    from parlour.training.config import load_config
    from parlour.training.jax_ppo import PPO

    cfg = load_config(config, [*overrides, "trainer=jax"])
    ppo = PPO(cfg)
    state = ppo.init(jax.random.PRNGKey(cfg.seed))
    n_steps = cfg.ppo.n_steps

    seat = ppo._seat(state.params, ppo._probs(state.sampling), state.snapshots)

    @jax.jit
    def env_only(games: Any, mask: jax.Array, key: jax.Array) -> Any:
        def move(carry: tuple[Any, jax.Array, jax.Array], _: Any) -> tuple[tuple[Any, jax.Array, jax.Array], None]:
            g, m, k = carry
            k, sub = jax.random.split(k)
            action = jax.random.categorical(sub, jnp.where(m, 0.0, -jnp.inf)).astype(jnp.int32)
            t = seat.step_batch(g, action)
            return (t.state, t.mask, k), None

        return jax.lax.scan(move, (games, mask, key), None, length=n_steps)[0]

    rollout = jax.jit(ppo._rollout)
    collected = rollout(state)
    learn = jax.jit(ppo._learn)
    _, env_s = _timed(lambda: env_only(state.games, state.mask, state.key), updates)
    _, rollout_s = _timed(lambda: rollout(state), updates)
    _, learn_s = _timed(lambda: learn(state, collected), updates)
    compile_s, update_s = _timed(lambda: ppo.update(state), updates)
    minibatches = ppo.batch // cfg.ppo.batch_size
    network = cfg.ppo.network if cfg.ppo.network != "mlp" else f"mlp {list(cfg.ppo.net_arch)}"
    return {
        "config": config + "".join(f" {o}" for o in overrides),
        "network": network,
        "batch": f"{cfg.train.n_envs} x {n_steps}",
        "epochs x minibatches": f"{cfg.ppo.n_epochs} x {minibatches}",
        "compile s": round(compile_s, 1),
        "env s": round(env_s, 3),
        "rollout s": round(rollout_s, 3),
        "learn s": round(learn_s, 3),
        "update s": round(update_s, 3),
        "steps/s": round(ppo.batch / update_s),
    }


def format_profile(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of :func:`profile_config` rows."""
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---" if c in COLUMNS[:4] else "---:" for c in COLUMNS) + "|",
    ]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[c]:,}" if isinstance(r[c], int) else str(r[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


__all__ = ["COLUMNS", "format_profile", "profile_config"]

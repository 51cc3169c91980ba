"""``opponents: [..., snapshots]`` (``trainer: jax``): a ring of ``self_play.max_snapshots`` past parameter sets, one
entry of the pool whose tables each play one slot, a new snapshot every ``self_play.snapshot_every`` steps into the
slot of the oldest; the ring and the update count live in the training state (so checkpoints and ``--resume`` carry
them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("omegaconf")
pytest.importorskip("matplotlib")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from parlour.training.checkpoints import read_checkpoint as read  # noqa: E402
from parlour.training.config import ConfigError, load_config  # noqa: E402
from parlour.training.jax_ppo import PPO  # noqa: E402
from parlour.training.train import train  # noqa: E402

RL = Path(__file__).resolve().parents[1] / "configs" / "six_suspects" / "rl.yaml"
#: A pool of the heuristic and two snapshots, a snapshot after every update of 128 steps.
SNAP = ("opponents=[six_suspects_heuristic,snapshots]", "self_play.max_snapshots=2", "self_play.snapshot_every=128")


@pytest.mark.parametrize(
    ("every", "size", "after"),
    [
        # (updates between snapshots, slots): the update each slot holds after updates 1..8 (0: the initial parameters)
        (1, 2, [[1, 0], [1, 2], [3, 2], [3, 4], [5, 4], [5, 6], [7, 6], [7, 8]]),
        (2, 3, [[0, 0, 0], [2, 0, 0], [2, 0, 0], [2, 4, 0], [2, 4, 0], [2, 4, 6], [2, 4, 6], [8, 4, 6]]),
        (3, 1, [[0], [0], [3], [3], [3], [6], [6], [6]]),
    ],
)  # fmt: skip
def test_the_ring_takes_every_kth_update_into_the_oldest_slot(
    every: int, size: int, after: list[list[int]], jax_tiny: tuple[str, ...]
) -> None:
    steps = 128 * every  # one update is 128 steps in the tiny config
    ppo = PPO(
        load_config(RL, [*jax_tiny, *SNAP, f"self_play.max_snapshots={size}", f"self_play.snapshot_every={steps}"])
    )
    assert ppo.snapshot_updates == every
    ring, updates = {"w": jnp.zeros((size, 2), jnp.float32)}, jnp.zeros((), jnp.int32)
    for k, expected in enumerate(after, start=1):
        ring, updates = ppo._snapshot(ring, updates, {"w": jnp.full((2,), float(k))})
        assert int(updates) == k
        assert np.asarray(ring["w"])[:, 0].tolist() == expected, k


def test_each_snapshot_entry_plays_its_own_slot(jax_tiny: tuple[str, ...]) -> None:
    """The pool's snapshot entries act with their slot's parameters, ``self`` with the current ones: three parameter
    sets that each put all their weight on another legal action are told apart by what each entry plays."""
    cfg = load_config(RL, [*jax_tiny, "opponents=[self,snapshots]", "self_play.max_snapshots=2"])
    ppo = PPO(cfg)
    from parlour.training.jax_ppo import init_params

    params = init_params(jax.random.PRNGKey(0), ppo.core.obs_size, ppo.core.num_actions, [16])
    game = ppo.core.init(jax.random.PRNGKey(0))
    obs, mask = ppo.core.observe(game, 0), ppo.core.legal_mask(game)
    legal = np.flatnonzero(np.asarray(mask))[:3]
    assert len(legal) == 3

    def leaning_on(action: int) -> dict[str, jax.Array]:
        return {**params, "action_net.bias": jnp.zeros_like(params["action_net.bias"]).at[action].set(50.0)}

    ring = jax.tree_util.tree_map(lambda a, b: jnp.stack([a, b]), leaning_on(legal[1]), leaning_on(legal[2]))
    seat = ppo._seat(leaning_on(legal[0]), None, ring)
    assert seat.entry_of.tolist() == [0, 1, 1]  # two pool entries: self, and the ring's two policies
    played = [int(policy(obs, mask, jax.random.PRNGKey(1))) for policy in seat.opponents]
    assert played == legal.tolist()


def test_the_ring_is_one_entry_of_the_draw_and_its_slot_is_drawn_per_table() -> None:
    """A pool of ``random`` and a ring of 3 (``opponent_draw: table``): half the tables are the ring's, each of its
    slots a third of those, and every other seat of a table plays the same policy (512 deals; the bounds are about
    five standard deviations of a binomial)."""
    from parlour.baselines.jax_bots import bot
    from parlour.envs.jax_core import make_core
    from parlour.envs.jax_core.single_seat import SingleSeat, Slots

    def first_legal(obs: jax.Array, mask: jax.Array, key: jax.Array, slot: int) -> jax.Array:
        return jnp.argmax(mask).astype(jnp.int32)

    core = make_core("six_suspects_v0", 3)
    seat = SingleSeat(core, [bot("random", "six_suspects_v0"), Slots(first_legal, 3)], opponent_draw="table")
    states = jax.jit(jax.vmap(lambda k: seat.reset(k)[0]))(jax.random.split(jax.random.PRNGKey(0), 512))
    table = np.asarray(states.opponents)
    others = table[np.arange(3)[None, :] != np.asarray(states.seat)[:, None]].reshape(512, 2)
    assert np.all(others[:, 0] == others[:, 1])
    counts = np.bincount(others[:, 0], minlength=4)  # policies: random, then the ring's slots 0, 1, 2
    assert abs(counts[0] / 512 - 0.5) < 0.11
    assert all(abs(c / 512 - 1 / 6) < 0.09 for c in counts[1:]), counts


@pytest.mark.slow
def test_a_resumed_run_with_snapshots_equals_the_run_that_never_stopped(
    tmp_path: Path, jax_tiny: tuple[str, ...]
) -> None:

    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    base = [*jax_tiny, *SNAP, "train.eval_every=0"]
    train(load_config(RL, base), straight, progress=False, final_eval=False)
    train(load_config(RL, [*base, "train.total_timesteps=256"]), stopped, progress=False, final_eval=False)
    train(load_config(RL, base), stopped, resume=True, progress=False, final_eval=False)
    a, b = (read(r / "checkpoints" / "latest")[1]["state"] for r in (straight, stopped))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["trainer=sb3", "train.vec_env=dummy"], r"opponents: 'snapshots' .* is trainer: jax's; with trainer: sb3, 'self' adds snapshots"),
        (["opponents=[snapshots,random,snapshots]"], r"opponents lists 'snapshots' 2 times: list it once"),
    ],
)  # fmt: skip
def test_snapshots_outside_the_jitted_trainer_or_twice_are_refused(
    overrides: list[str], message: str, jax_tiny: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError, match=message) as refused:
        load_config(RL, [*jax_tiny, *SNAP, *overrides])
    assert "\n" not in str(refused.value)

"""The reusable checks: they pass on 6 Suspects for every player count, and they catch broken envs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from parlour.envs import checks, six_suspects_v0
from parlour.envs.six_suspects import rules
from parlour.envs.six_suspects.env import OBSERVATION_LAYOUT, SixSuspectsEnv

PLAYER_COUNTS = list(range(2, 9))


def test_fuzz_with_turn_cap_truncates() -> None:
    report = checks.fuzz(lambda: six_suspects_v0.env(num_players=3, max_turns=7), games=5)
    assert report.truncated == 5 and report.longest == 7 + 3


# ------------------------------------------------------------------------------------------ broken envs
class _Broken(SixSuspectsEnv):
    def invariants(self) -> None:  # the broken views below would trip the encoder's self-check first
        pass


class LeakyObservation(_Broken):
    """Shows every seat the card under Albert's top position."""

    def _incremental_observation(self, seat: int) -> np.ndarray:
        obs = super()._incremental_observation(seat)
        obs[OBSERVATION_LAYOUT["seen_cards"].start + self.game.layout[0]] = 1
        return obs


class LeakyText(_Broken):
    def render_text(self, perspective: str | None = None) -> str:
        return super().render_text(None)


class LeakyInfos(_Broken):
    def _apply(self, action: int) -> Any:
        out = super()._apply(action)
        for a in self.agents:
            self.infos[a] = (
                {"culprits": list(rules.resolve(self.game.layout).culprits)} if not self.game_over else self.infos[a]
            )
        return out


class TruthfulResampler(_Broken):
    def _resample_state(self, seat: int, rng: np.random.Generator) -> rules.SixSuspectsState:
        return self.game.clone()


class ForgetfulObservation(_Broken):
    """Forgets which cards the seat has seen."""

    def _incremental_observation(self, seat: int) -> np.ndarray:
        obs = super()._incremental_observation(seat)
        obs[OBSERVATION_LAYOUT["seen_cards"]] = 0
        return obs


BROKEN = [
    (LeakyObservation, "leaks into the observation"),
    (LeakyText, "leaks into the text view"),
    (LeakyInfos, "leaks into the infos"),
    (TruthfulResampler, "does not really redraw"),
    (ForgetfulObservation, "ignores a change in what it knows"),
]


@pytest.mark.parametrize(("cls", "message"), BROKEN, ids=[c.__name__ for c, _ in BROKEN])
def test_audit_catches_broken_envs(cls: type[SixSuspectsEnv], message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        checks.hidden_information_audit(lambda: cls(num_players=3), games=2, every=2)


def test_fuzz_catches_a_broken_invariant() -> None:
    class Drifting(SixSuspectsEnv):
        def _apply(self, action: int) -> Any:
            out = super()._apply(action)
            self.src.vector[self.src.at["games_played"]] = 0.5  # corrupt the incremental encoding
            return out

    with pytest.raises(AssertionError, match="incremental encoding drifted"):
        checks.fuzz(lambda: Drifting(num_players=2), games=1)


def test_replay_detects_a_different_outcome() -> None:
    from parlour.envs import replay

    env = six_suspects_v0.env(num_players=2)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    record = env.record()
    record["outcome"]["scores"] = [9, 9]
    with pytest.raises(ValueError, match="outcome differs"):
        replay(record)
    record["env"] = "chess_v9"
    with pytest.raises(ValueError, match="unknown environment 'chess_v9'"):
        replay(record)


class ReshufflingClone(SixSuspectsEnv):
    """A clone that does not copy the hidden layout faithfully."""

    def clone(self) -> SixSuspectsEnv:
        new = super().clone()
        new.game.layout = new.game.layout[::-1]
        return new


def test_copy_check_catches_an_unfaithful_clone() -> None:
    assert checks.copy_check(lambda: six_suspects_v0.env(num_players=3), seed=1) > 0
    with pytest.raises(AssertionError, match="observes differently"):
        checks.copy_check(lambda: ReshufflingClone(num_players=3), seed=1)


def test_audit_catches_a_text_view_that_shows_which_card_left_a_hand() -> None:
    """An Elevenses text view printing each hand in storage order (as it once did) tells an onlooker which of two
    same-back cards left a hand; the resampler reorders hands, so the audit sees the order move and fails."""
    from parlour.envs.elevenses import rules as E
    from parlour.envs.elevenses.env import ElevensesEnv

    class StorageOrderText(ElevensesEnv):
        def render_text(self, perspective: str | None = None) -> str:
            g, me = self.game, None if perspective is None else self._seat[perspective]
            return " | ".join(
                " ".join(f"{E.number(c) if me is None or g.knows(me, c) else '?'}/p{E.owner(c)}" for c in g.hands[s])
                for s in range(g.n)
            )

    checks.hidden_information_audit(ElevensesEnv, games=2, every=6, samples=1)
    with pytest.raises(AssertionError, match="leaks into the text view"):
        checks.hidden_information_audit(StorageOrderText, games=2, every=6, samples=1)


def test_the_state_vector_is_derived_from_the_source_by_field_name() -> None:
    from parlour.envs.layout import Field, Layout, state_from_source

    src = Layout((Field("zero", (1,), ""), Field("one", (1,), ""), Field("a", (2,), ""), Field("b", (3,), "")))
    state = Layout((Field("n", (2,), ""), Field("b", (3,), ""), Field("votes", (2,), ""), Field("extra", (1,), "")))
    v = state_from_source(state, src, np.arange(7, dtype=np.float32), 1, rename={"votes": "a"})
    assert v.tolist() == [0, 1, 4, 5, 6, 2, 3, 0]
    with pytest.raises(ValueError, match="state field 'b' has 3 entries, source field 'a' 2"):
        state_from_source(state, src, np.zeros(7, np.float32), 0, rename={"b": "a"})


# ------------------------------------------------------------------------------- final infos of a penalty
class _OldPenaltyInfos:
    """The driver's penalty as it once was: the offence explained -- the offender's legal actions, named -- in the
    outcome every seat's infos carry (the offender's own explanation copied into the shared outcome)."""

    infos: dict[str, dict[str, Any]]

    def _illegal(self, *args: Any, **kwargs: Any) -> None:
        super()._illegal(*args, **kwargs)  # type: ignore[misc]
        told = next((info["illegal_action"] for info in self.infos.values() if "illegal_action" in info), None)
        if told is not None:
            for info in self.infos.values():
                info["outcome"]["illegal_action"] = {"agent": told["agent"], "message": told["message"]}


#: Whether the old penalty told the other seats something hidden from them: in 6 Suspects the offender's legal
#: actions (which positions it may peek, whether it may announce) are public, in the other games they name its hand
#: (Elevenses, This Game Goes to Eleven) or its counters (Lady Alice).
OLD_PENALTY_LEAKED = {
    "six_suspects_v0": False,
    "goes_to_eleven_v0": True,
    "lady_alice_v0": True,
    "lady_alice_v1": True,
    "lady_alice_v2": True,
    "elevenses_v0": True,
}


@pytest.mark.parametrize("name", sorted(OLD_PENALTY_LEAKED))
def test_audit_checks_what_a_penalty_tells_the_other_seats(name: str) -> None:
    from parlour.envs import ENVIRONMENTS, make

    assert set(OLD_PENALTY_LEAKED) == set(ENVIRONMENTS)
    report = checks.hidden_information_audit(lambda: make(name), games=1, every=3, samples=1)
    assert report.illegal_actions_checked > 0
    cls = type(make(name))
    old = type(f"OldPenalty{cls.__name__}", (_OldPenaltyInfos, cls), {})
    if OLD_PENALTY_LEAKED[name]:
        with pytest.raises(AssertionError, match=r"leaks into the final infos of .* after player_\d's illegal action"):
            checks.hidden_information_audit(old, games=1, every=3, samples=1)
    else:
        checks.hidden_information_audit(old, games=1, every=3, samples=1)

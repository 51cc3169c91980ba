"""The tracks of the published baselines, declared once: what each is called, the file its results are stored in,
whether it ships a trained policy (``<game>_<track>``), and the line that says what it is.

Everything that names a track reads this registry: the shipped-name rules of :mod:`parlour.baselines`, the
``parlour baselines --track`` choices, the stored results' file names and the order BASELINES.md renders them in.
What a track *does* -- how it regenerates, how it renders -- lives in the publishing wing
(:mod:`parlour.training.publish.tracks`), keyed by these names; this module imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Track:
    """One part of BASELINES.md."""

    #: The ``--track`` value (and, for a track that ships, the shipped policy's suffix: ``<game>_<name>``).
    name: str
    #: What it is, in one line (the CLI's help).
    summary: str
    #: Whether it ships a trained policy as ``<game>_<name>`` (a spec file ``<env>_<name>.json`` and its weights).
    ships: bool = False
    #: The stored result's file is ``<env>_<results>.json``.
    results: str = ""

    def results_name(self, env_name: str) -> str:
        """The file name of ``env_name``'s stored result of this track."""
        return f"{env_name}_{self.results}.json"


#: Every track, in the order BASELINES.md shows them within a game (the distilled track is the default ``--track``).
TRACKS: dict[str, Track] = {
    t.name: t
    for t in (
        Track("rl", "the rl track (trained from the environment alone)", ships=True, results="rl_results"),
        Track("sweep", "its tuning sweep (on seeds kept apart)", results="sweep_results"),
        Track("ablation", "its ablation (on seeds kept apart)", results="ablation_results"),
        Track("distilled", "the distilled track (the expert imitated, then PPO)", ships=True, results="results"),
        Track(
            "heldout",
            "the held-out mixed table (every published policy at a table of the scenario's bots together; plays, "
            "never trains)",
            results="heldout_results",
        ),
        Track("exploit", "the exploitability bounds", results="exploit_results"),
    )
}
#: The default ``--track``.
DEFAULT_TRACK = "distilled"
#: The tracks a shipped trained policy is named for (``<game>_<track>``): ``rl`` learned from the environment alone,
#: ``distilled`` imitates the game's expert and reads its inference. A track, not an algorithm (both use PPO).
SHIPPED_TRACKS: tuple[str, ...] = tuple(t.name for t in TRACKS.values() if t.ships)


def parse_results_name(file_name: str) -> tuple[str, str] | None:
    """``(env id, track)`` of a stored result's file name (``<env>_<results>.json``), or ``None`` for any other
    file. The longest ending wins (``_rl_results.json`` before ``_results.json``); the env id must end in a version
    (``_v<N>``)."""
    for track in sorted(TRACKS.values(), key=lambda t: -len(t.results)):
        ending = f"_{track.results}.json"
        if file_name.endswith(ending):
            env_name = file_name[: -len(ending)]
            _, sep, number = env_name.rpartition("_v")
            return (env_name, track.name) if sep and number.isdigit() and len(env_name) > len(sep + number) else None
    return None


def parse_shipped_name(file_name: str) -> tuple[str, str] | None:
    """``(env id, track)`` of a shipped policy's spec file name (``<env>_<track>.json``, a track that ships), or
    ``None``."""
    for name in SHIPPED_TRACKS:
        ending = f"_{name}.json"
        if file_name.endswith(ending):
            env_name = file_name[: -len(ending)]
            _, sep, number = env_name.rpartition("_v")
            if sep and number.isdigit() and len(env_name) > len(sep + number):
                return env_name, name
    return None

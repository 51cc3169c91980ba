"""What each published track does, keyed by the tracks :mod:`parlour.baselines.tracks` declares: how it regenerates
its stored results, how it renders its section of BASELINES.md. ``parlour baselines`` reads this registry alone;
:func:`regenerate` runs a track and rewrites BASELINES.md from every stored result (:func:`render`).

A new track is a module of this wing with a ``regenerate(games, *, root, folder, ...)`` that stores
``<env>_<results>.json`` and a ``render(result) -> lines``, its declaration in :data:`parlour.baselines.tracks.TRACKS`
(name, results file, whether it ships), and its entry in :data:`WORK`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from parlour.baselines.tracks import TRACKS
from parlour.training.publish import distilled, document, exploit, heldout, rl
from parlour.training.publish.results import check_baselines_md, write_baselines_md
from parlour.training.publish.schema import CHECKPOINTS


@dataclass(frozen=True)
class TrackWork:
    """One track's behaviour."""

    #: ``regenerate(games, *, root, folder, **options)``: train (or reuse), evaluate and store the track's results of
    #: ``games`` (``None``: every game whose spec has the track) in ``folder``; BASELINES.md is not touched.
    regenerate: Callable[..., None]
    #: ``render(result, folder) -> lines``: the track's section of a game in BASELINES.md from its stored result.
    render: Callable[[dict[str, Any], Path], list[str]]


#: Track name -> what it does; the keys are exactly the declared tracks (``tests/test_layering.py``).
WORK: dict[str, TrackWork] = {
    "rl": TrackWork(rl.regenerate, lambda r, folder: rl.render(r)),
    "sweep": TrackWork(partial(rl.regenerate_sweep, kind="sweep"), lambda r, folder: rl.render_sweep(r)),
    "ablation": TrackWork(partial(rl.regenerate_sweep, kind="ablation"), lambda r, folder: rl.render_sweep(r)),
    "distilled": TrackWork(distilled.regenerate, distilled.render),
    "heldout": TrackWork(heldout.regenerate, lambda r, folder: heldout.render(r)),
    "exploit": TrackWork(exploit.regenerate, lambda r, folder: exploit.render(r)),
}
assert list(WORK) == list(TRACKS), "every declared track, and only those, has its work here"


def render(folder: Path = CHECKPOINTS) -> str:
    """BASELINES.md from every stored result in ``folder``, each part drawn by its track."""
    return document.render(folder, {name: _bound(work.render, folder) for name, work in WORK.items()})


def _bound(draw: Callable[[dict[str, Any], Path], list[str]], folder: Path) -> Callable[[dict[str, Any]], list[str]]:
    return lambda result: draw(result, folder)


def rewrite(root: Path, folder: Path = CHECKPOINTS) -> Path:
    """Write ``root/BASELINES.md`` from every stored result in ``folder``; returns its path."""
    return write_baselines_md(root / "BASELINES.md", render(folder))


def regenerate(
    track: str, games: list[str] | None, *, root: Path | None = None, folder: Path = CHECKPOINTS, **options: Any
) -> Path:
    """Regenerate ``track``'s results of ``games`` (``options``: that track's own, such as ``train_models``,
    ``progress``, ``jobs``, ``runs``), then rewrite BASELINES.md; returns its path. A link at BASELINES.md is refused
    before anything is trained, not after."""
    if track not in WORK:
        raise ValueError(f"no track {track!r}: expected one of {list(WORK)}")
    root = root or Path.cwd()
    check_baselines_md(root / "BASELINES.md")
    WORK[track].regenerate(games, root=root, folder=folder, **options)
    return rewrite(root, folder)


def refresh_curves(
    games: list[str] | None, *, root: Path | None = None, folder: Path = CHECKPOINTS, **options: Any
) -> Path:
    """The rl track's learning curves recomputed from its run folders (:func:`parlour.training.publish.rl.refresh_curves`),
    then BASELINES.md rewritten; nothing is trained or played."""
    root = root or Path.cwd()
    check_baselines_md(root / "BASELINES.md")
    rl.refresh_curves(games, root=root, folder=folder, **options)
    return rewrite(root, folder)

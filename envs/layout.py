"""Observation layouts: named slices over one flat ``float32`` vector.

A :class:`Layout` is the single source of truth for an encoding. Encoders write through its slices, the
decoded dict view (``env.unwrapped.observation_dict(agent)``) reads through them, and the observation
table in each environment's docs is generated from it (a test keeps the two in step).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Field:
    """One named block of the vector.

    ``shape`` is the block's logical shape (the flat slice has ``prod(shape)`` entries); ``axes`` names each
    axis, ``description`` says what a value means.
    """

    name: str
    shape: tuple[int, ...]
    description: str
    axes: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        return prod(self.shape)


@dataclass(frozen=True)
class Layout:
    """An ordered list of fields laid end to end."""

    fields: tuple[Field, ...]
    slices: dict[str, slice] = field(init=False, repr=False, compare=False)
    by_name: dict[str, Field] = field(init=False, repr=False, compare=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        slices: dict[str, slice] = {}
        start = 0
        for f in self.fields:
            if f.name in slices:
                raise ValueError(f"duplicate layout field {f.name!r}")
            slices[f.name] = slice(start, start + f.size)
            start += f.size
        object.__setattr__(self, "slices", slices)
        object.__setattr__(self, "by_name", {f.name: f for f in self.fields})
        object.__setattr__(self, "size", start)

    def __deepcopy__(self, memo: dict[int, Any]) -> Layout:
        # immutable (its dicts are built once, above): an env's deep copy shares it, as it would a tuple
        return self

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    def field(self, name: str) -> Field:
        return self.by_name[name]

    def view(self, vector: np.ndarray, name: str) -> np.ndarray:
        """A writable view of one field, in its logical shape."""
        return vector[self.slices[name]].reshape(self.by_name[name].shape)

    def decode(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Split a flat vector into a dict of named arrays (copies, in their logical shapes)."""
        if vector.shape != (self.size,):
            raise ValueError(f"expected a vector of shape ({self.size},), got {vector.shape}")
        return {f.name: vector[self.slices[f.name]].reshape(f.shape).copy() for f in self.fields}

    def markdown_table(self) -> str:
        """The observation table for the docs: one row per field, with its index range."""
        rows = ["| Index | Field | Shape | Meaning |", "|---|---|---|---|"]
        for f in self.fields:
            s = self.slices[f.name]
            shape = " × ".join(
                f"{n} ({a})" if a else str(n) for n, a in zip(f.shape, f.axes or ("",) * len(f.shape), strict=False)
            )
            rows.append(f"| {s.start}–{s.stop - 1} | `{f.name}` | {shape} | {f.description} |")
        rows.append(f"| | total | {self.size} | |")
        return "\n".join(rows)


def keyword_for_size(layout_of: Callable[[int], Layout], size: int, keywords: range, env: str) -> int:
    """The keyword value (``max_piles``, ``max_rounds``, …) whose layout has ``size`` entries: lets a reader of
    bare observation vectors decode them whatever the env's keyword."""
    for value in keywords:
        if layout_of(value).size == size:
            return value
    raise ValueError(f"an observation of {size} entries is not a {env} observation")


# ----------------------------------------------------------------------------------------------- the source vector
class Source:
    """The source vector an env hands observations out of (one gather per seat), kept up to date as the game moves.

    Writes go through a memoryview (an item write costs half of NumPy's). A *marker* -- a one-hot entry such as the
    phase, the seat to act, a seat's last peek -- remembers where it stands, so moving it is two writes without a
    search: ``move(key, entry)``. ``at[name]`` is the first entry of each field. Pickles and deep copies rebuild
    the memoryview over the copied vector.
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.vector = np.zeros(layout.size, np.float32)
        self.at = {f.name: layout[f.name].start for f in layout.fields}
        self.marks: dict[Any, int] = {}
        self.m: Any = self.vector.data

    def reset(self) -> None:
        """All zero but the constant ``one`` (when the layout has it); no marker shown."""
        self.vector[:] = 0
        if "one" in self.at:
            self.m[self.at["one"]] = 1.0
        self.marks = {}

    def move(self, key: Any, entry: int) -> None:
        """Show marker ``key`` at ``entry`` (``-1``: nowhere), clearing where it stood."""
        old = self.marks.get(key, -1)
        if old != entry:
            m = self.m
            if old >= 0:
                m[old] = 0.0
            if entry >= 0:
                m[entry] = 1.0
            self.marks[key] = entry

    def show(self, entries: tuple[int, ...]) -> None:
        """Move markers ``0, 1, …`` to ``entries`` at once (``-1``: nowhere): the one-hot fields that the decision
        under way moves, most of them not at all (each is compared before it moves)."""
        marks, m = self.marks, self.m
        for key, e in enumerate(entries):
            was = marks.get(key, -1)
            if was != e:
                if was >= 0:
                    m[was] = 0.0
                if e >= 0:
                    m[e] = 1.0
                marks[key] = e

    def view(self, name: str) -> np.ndarray:
        """A writable view of one field, in its logical shape (for from-scratch writes)."""
        return self.layout.view(self.vector, name)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["m"]  # a memoryview cannot be pickled or copied
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.m = self.vector.data


# ----------------------------------------------------------------------------------------------- gathering
# Environments keep one internal *source* vector -- public fields once, in absolute seats, and private fields once
# per seat -- updated incrementally as the game moves, and hand out each seat's observation as one gather from it.
# A source layout must start with the constant fields ``zero`` and ``one``.


def relative_rows(src: Layout, name: str, rows: int, observer: int, n: int) -> np.ndarray:
    """Source entries of a per-seat field, row ``k`` being the seat ``k`` places left of ``observer`` (rows past
    the player count read the constant zero); only the first ``rows`` rows."""
    width = src.field(name).size // src.field(name).shape[0]
    return rotated_entries(src, name, observer, n, (0,), rows)[: rows * width]


def relative_columns(src: Layout, name: str, observer: int, n: int) -> np.ndarray:
    """Source entries of a field whose *last* axis is the seat (one row per event, say): in each row, column ``k``
    is the seat ``k`` places left of ``observer`` (columns past the player count read the constant zero)."""
    shape = src.field(name).shape
    return rotated_entries(src, name, observer, n, (len(shape) - 1,), shape[-1])


def rotated_entries(
    src: Layout, name: str, observer: int, n: int, axes: tuple[int, ...], seats: int, block: int | None = None
) -> np.ndarray:
    """Source entries of a field with several seat axes (a card's owner *and* the hand holding it, say): along
    each axis in ``axes`` entry ``k < seats`` reads the seat ``k`` places left of ``observer`` (the constant zero
    past the player count) and entries from ``seats`` on (Mrs Lansdowne's plate, say) stay where they are.
    ``block``: read that seat's block of a per-seat private field (its first axis), before the axes apply."""
    f = src.field(name)
    index = np.arange(src[name].start, src[name].stop).reshape(f.shape)
    if block is not None:
        index = index[block]
    zero = src["zero"].start
    for axis in axes:
        size = index.shape[axis]
        perm = np.array([((observer + k) % n if k < n else -1) if k < seats else k for k in range(size)])
        moved = np.take(index, np.maximum(perm, 0), axis=axis)
        shape = [1] * index.ndim
        shape[axis] = size
        index = np.where((perm < 0).reshape(shape), zero, moved)
    return index.ravel()


def one_hot_entries(src: Layout, size: int, hot: int) -> np.ndarray:
    """Source entries of a constant one-hot block: ``one`` at ``hot``, ``zero`` elsewhere."""
    return np.where(np.arange(size) == hot, src["one"].start, src["zero"].start)


def state_from_source(
    state: Layout, src: Layout, source: np.ndarray, players: int, rename: dict[str, str] | None = None
) -> np.ndarray:
    """A new full-information vector derived from an env's source vector: its first field is the one-hot player
    count (``players``: its index) and every field named as a source field (or mapped to one by ``rename``, state
    name -> source name) is copied from it, so state and observations cannot disagree; the game fills the rest."""
    v = np.zeros(state.size, np.float32)
    v[state[state.fields[0].name].start + players] = 1
    rename = rename or {}
    for f in state.fields[1:]:
        name = rename.get(f.name, f.name)
        if name in src.by_name:
            if src.field(name).size != f.size:
                raise ValueError(
                    f"state field {f.name!r} has {f.size} entries, source field {name!r} {src.field(name).size}"
                )
            v[state[f.name]] = source[src[name]]
    return v


def gather_index(
    obs: Layout,
    src: Layout,
    observer: int,
    n: int,
    *,
    relative: tuple[str, ...] = (),
    private: dict[str, str] | None = None,
    special: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """For each entry of ``observer``'s observation, the source entry it is read from.

    A field named in ``relative`` lists the source's per-seat rows by seat relative to the observer (0 = self);
    one in ``private`` reads the observer's own block of the source field it names; one in ``special`` takes the
    given entries; any other field is the source field of the same name, as it is.
    """
    private, special = private or {}, special or {}
    parts: list[np.ndarray] = []
    for f in obs.fields:
        if f.name in special:
            parts.append(np.asarray(special[f.name]))
        elif f.name in relative:
            parts.append(relative_rows(src, f.name, f.shape[0], observer, n))
        elif f.name in private:
            parts.append(np.arange(f.size) + src[private[f.name]].start + observer * f.size)
        else:
            s = src[f.name]
            if s.stop - s.start != f.size:
                raise ValueError(f"source field {f.name!r} has {s.stop - s.start} entries, the observation {f.size}")
            parts.append(np.arange(s.start, s.stop))
    index = np.concatenate(parts).astype(np.intp)
    if index.shape != (obs.size,):
        raise ValueError(f"the gather covers {index.shape[0]} entries of a {obs.size}-entry observation")
    return index


def read_only(index: np.ndarray) -> np.ndarray:
    """``index`` made read-only: a gather index shared between envs and calls (a game's observer caches one per seat
    and table) must not be changed through any of them."""
    index.flags.writeable = False
    return index


def written(size: int, write: Callable[[np.ndarray], None]) -> np.ndarray:
    """A new zeroed ``float32`` vector of ``size`` entries, written by ``write`` (a game's from-scratch writer)."""
    vector = np.zeros(size, np.float32)
    write(vector)
    return vector

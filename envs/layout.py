"""Observation layouts: named slices over one flat ``float32`` vector.

A :class:`Layout` is the single source of truth for an encoding. Encoders write through its slices, the
decoded dict view (``env.unwrapped.observation_dict(agent)``) reads through them, and the observation
table in each environment's docs is generated from it (a test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

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
        object.__setattr__(self, "size", start)

    def __getitem__(self, name: str) -> slice:
        return self.slices[name]

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    def view(self, vector: np.ndarray, name: str) -> np.ndarray:
        """A writable view of one field, in its logical shape."""
        return vector[self.slices[name]].reshape(self.field(name).shape)

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

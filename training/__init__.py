"""Parlour training and evaluation tools, and the ``parlour`` command line."""

from __future__ import annotations

from parlour.baselines.extras import TRAIN_MODULES, missing_train_modules, require_train_extra

__all__ = ["TRAIN_MODULES", "missing_train_modules", "require_train_extra"]

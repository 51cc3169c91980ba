"""Moved: the game loop and ``parlour match`` live in :mod:`parlour.training.evaluation` (``games``: one game, its
record, the deal seeds; ``match``: the seat-rotated match and its table), the intervals in
:mod:`parlour.training.stats`. These names stay importable from here for one release."""

from __future__ import annotations

from parlour.training.evaluation.games import deal_seeds, file_safe, play_game, save_record
from parlour.training.evaluation.match import BotStats, format_table, run_match
from parlour.training.stats import Z95, mean_interval, wilson_interval

__all__ = [
    "Z95",
    "BotStats",
    "deal_seeds",
    "file_safe",
    "format_table",
    "mean_interval",
    "play_game",
    "run_match",
    "save_record",
    "wilson_interval",
]

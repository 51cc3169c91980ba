"""Evaluation: the one game loop (:mod:`~parlour.training.evaluation.games`) and the seat-rotated match
(:mod:`~parlour.training.evaluation.match`). Matchups at benchmark tables, cross-play and ratings are in
:mod:`parlour.training.evaluate`; every interval is in :mod:`parlour.training.stats`."""

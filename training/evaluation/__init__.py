"""Evaluation: the one game loop (:mod:`~parlour.training.evaluation.games`: one game, its record, the deal seeds),
the seat-rotated match (:mod:`~parlour.training.evaluation.match`) and matchups at benchmark tables, cross-play and
ratings (:mod:`~parlour.training.evaluation.matchups`); every interval is in :mod:`parlour.training.stats`."""

"""Acquisition functions (:mod:`.functions`: EI and its integral over hyperparameter samples; :mod:`.entropy`:
entropy search) and their optimisers (:mod:`.optimize` on the unit cube, :mod:`.annealing` on discrete
codes)."""

"""Kernels: on the unit cube with fidelity and task axes (:mod:`.continuous`), COMBO's diffusion kernel on
a graph Cartesian product (:mod:`.diffusion`), and kernels on spaces without coordinates built from
pairwise distances (:mod:`.distance`, NASBOT's OTMANN)."""

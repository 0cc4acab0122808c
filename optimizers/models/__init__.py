"""Surrogate models shared by the optimizer plugins, split by role as BoTorch splits them (issue 22, item 7).

``models/`` the models: the GP (:mod:`.gp`), COMBO's graph GP (:mod:`.graph_gp`), DNGO's adaptive basis
(:mod:`.adaptive_basis`), BOCS's sparse Bayesian linear regression (:mod:`.sparse_blr`), the posterior
contract every model honours (:mod:`.posterior`) and their linear algebra (:mod:`.linalg`). Beside it:
``kernels/``, ``inference/`` (MCMC, slice sampling, priors), ``acquisition/`` (functions and their
optimisers) and ``common/`` (scaffolding several plugins share).
"""

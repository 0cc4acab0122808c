"""Architecture spaces: one interface for every cell, graph or module language.

Every architecture space here is a :class:`benchsuite.space.SearchSpace` (sample,
neighbours, validate, a hashable exact key, JSON) whose configurations are plain data,
and its module offers a pure ``build_network(config, **sizes) -> torch.nn.Module`` that
makes the network a configuration names. Benchmarks never special-case a space: a lookup
table and a live training of the same space share the space object, so one
configuration means one network in both. Where configurations that differ as data build
the same function, the module also gives an isomorphism-aware canonical form, kept apart
from the exact key (the exact key is what tables are indexed by).

The spaces: ``nb201`` (the NAS-Bench-201 cell), ``combo_cell`` (COMBO's binary NAS cell),
``layer_graph`` (NASBOT's layer graphs; ``layer_graph_torch`` compiles them, ``otmann`` is their
distance) and ``deeparchitect`` (the DeepArchitect language and its spaces; a network is
built by ``DASpace.build``).

torch is imported only inside the functions that build networks, so importing a space
(for a tabular run or ``benchsuite --help``) stays fast.
"""

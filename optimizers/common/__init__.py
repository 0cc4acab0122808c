"""Scaffolding several plugins share: unit-cube snapping, designs and the Matern GP set-up of the GP plugins
(:mod:`.bo_common`), the cost-aware entropy-search base class of entropy_search, fabolas and mtbo
(:mod:`.es_bo`)."""

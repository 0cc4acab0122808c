"""Built-in optimizer plugins (one module each) and the models they share (``benchsuite.optimizers.models``).

Every module here except ``models`` is scanned by :mod:`benchsuite.registry`.
"""

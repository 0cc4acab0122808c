"""Built-in optimizer plugins (one module each) and the models they share (``benchsuite.optimizers.models``).

Every module here except ``models`` is scanned by :mod:`benchsuite.registry`.
"""

if __name__ != "benchsuite.optimizers":  # the repository folder imported as a top-level package
    raise ImportError("the folder 'optimizers/' is the package benchsuite.optimizers: import benchsuite.optimizers "
                      "(importing it as 'optimizers' would load every file as a second, different module)")


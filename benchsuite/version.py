"""The suite's version (one place: the package, provenance and the build read it)."""
__version__ = "0.1.0"

"""Built-in benchmarks; every module here is scanned by the registry."""

"""Builtin checks, one module per topic; rules name them as ``module.function``
(see :mod:`cfglint.check.registry`)."""

"""Loaders: one module per input kind. Each reads a file into plain facts with positions."""

"""Reporters: one module per output format. Each turns a Report into text."""

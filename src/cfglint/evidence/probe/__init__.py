"""Runtime probe (issue 8): a short real step of both sides' numerics confirms or refutes
what the lint flagged. Importing this package imports no framework."""

"""Fitness benchmarks on realistic mistakes of small models (issue 9): real text nobody here wrote,
retyped the way small models get it wrong, each case with the outcome it must have."""

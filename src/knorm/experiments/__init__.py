"""Reproductions of the paper's examples and experiments."""

"""Optuna search over one nest's recipe space: the space, the study's storage and queue, and the tuner."""

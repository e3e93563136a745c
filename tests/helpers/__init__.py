"""Helpers that test modules of several packages share: import them from here, never from another test module."""

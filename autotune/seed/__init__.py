"""The shipped seed: autotune every corpus nest on this machine (build), and re-measure what it lends (confirm)."""

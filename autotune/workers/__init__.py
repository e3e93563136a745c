"""The tuning workers: claim queued jobs, tune them, keep a heartbeat and hold their CPUs."""

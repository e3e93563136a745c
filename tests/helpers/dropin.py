"""Drop-in code instrumented by a test: it reports which schedule it runs."""

from __future__ import annotations


def reports_its_choice(guarded: str) -> str:
    """The drop-in code, printing to stderr which schedule it runs (the test's own instrument)."""
    assert guarded.count("if (perfembed_check_ok)\n") == 1
    return guarded.replace("if (perfembed_check_ok)\n",
                           'fprintf(stderr, "tuned=%d\\n", perfembed_check_ok);\nif (perfembed_check_ok)\n')

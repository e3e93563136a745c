"""NumPy kernels over the API (#61): ``"language": "python"`` (or a name ending in .py) reads the source with
the NumPy frontend, and its nest finds C neighbours in the same database."""

from __future__ import annotations

from fastapi.testclient import TestClient

JACOBI = '''
import numpy as np

def jacobi_2d(TSTEPS: int, A: "float64[N, N]", B: "float64[N, N]"):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])
'''
PARAMS = {"N": 40, "TSTEPS": 4}


def test_a_numpy_kernel_is_analysed_by_its_language_or_its_name(api: TestClient) -> None:
    for extra in ({"language": "python"}, {"name": "stencils.py"}):
        r = api.post("/v1/programs:analyze", json={"source": JACOBI, "params": PARAMS, **extra})
        assert r.status_code == 200, r.text
        (nest,) = r.json()["nests"]
        assert nest["function"] == "jacobi_2d"
    as_c = api.post("/v1/programs:analyze", json={"source": JACOBI, "params": PARAMS})
    assert as_c.status_code == 422 and "program.c:" in as_c.text


def test_python_refuses_what_only_c_has_and_names_its_lines(api: TestClient) -> None:
    r = api.post("/v1/programs:analyze", json={"source": JACOBI, "language": "python", "headers": {"a.h": "x"}})
    assert r.status_code == 422 and "a Python kernel is one file with no headers" in r.text
    bad = JACOBI.replace("for t in", "while True:\n        pass\n    for t in")
    r = api.post("/v1/programs:analyze", json={"source": bad, "language": "python", "params": PARAMS})
    assert r.status_code == 200 and r.json()["nests"] == [], r.text  # as for C: what was refused, and where
    (refused,) = r.json()["rejected"]
    line = bad.splitlines().index("    while True:") + 1
    assert refused["construct"] == "while loop" and refused["location"] == {"file": "program.py", "line": line,
                                                                            "column": 5}, refused


def test_a_numpy_kernel_finds_c_neighbours(api: TestClient, auth: dict[str, str]) -> None:
    body = {"source": JACOBI, "language": "python", "params": PARAMS, "k": 3, "fallback": False}
    r = api.post("/v1/suggestions", json=body, headers=auth)
    assert r.status_code == 200, r.text
    (nest,) = r.json()["nests"]
    assert nest["neighbours"] and all(".c#" in n["name"] for n in nest["neighbours"])

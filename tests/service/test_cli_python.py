"""``perfembed analyze|measure kernel.py --function F`` read a NumPy kernel (shapes from --param and type hints, or
from --inputs example.npz); a kernel outside the subset is refused naming its line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from service.cli import app

KERNEL = '''import numpy as np

def smooth(A: "float64[N]", B: "float64[N]"):
    B[1:-1] = (A[:-2] + A[1:-1] + A[2:]) / 3.0

def refused(A: "float64[N]"):
    while True:
        A[0] = 1.0
'''


def test_analyze_reads_a_numpy_kernel(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    ran = CliRunner().invoke(app, ["analyze", str(path), "--function", "smooth", "--param", "N=100", "--json"])
    assert ran.exit_code == 0, ran.output
    (nest,) = json.loads(ran.stdout)["nests"]
    assert nest["params"] == {"N": 100} and nest["static_features"] is not None
    np.savez(tmp_path / "in.npz", A=np.zeros(50), B=np.zeros(50))
    ran = CliRunner().invoke(app, ["analyze", str(path), "--function", "smooth", "--inputs", str(tmp_path / "in.npz"),
                                   "--json"])
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["nests"][0]["params"] == {}
    ran = CliRunner().invoke(app, ["analyze", str(path), "--function", "refused"])
    assert ran.exit_code != 0 and "no supported loop nest (1 rejected)" in str(ran.exception)
    assert "kernel.py:7:5: while loop: while True:" in ran.output

"""Every parameter has a value: one check, one line naming what is missing, for every layer."""

from __future__ import annotations

import pytest

from loopnest import Harness, extract_scops
from loopnest.errors import ParameterError
from loopnest.parameters import missing_params, require_params
from tests.helpers.paths import ROOT

GEMM = ROOT / "corpus/kernels/blas3/gemm_ijk.c"


def test_the_values_come_back_as_integers_in_the_nests_order() -> None:
    assert require_params(["ni", "nj"], {"nj": "8", "ni": 4, "extra": 1}, what="w") == {"ni": 4, "nj": 8}
    assert missing_params(["ni", "nj", "nk"], {"nj": 1}) == ["ni", "nk"]


def test_a_missing_value_is_one_line_naming_every_missing_parameter_and_the_hint() -> None:
    with pytest.raises(ParameterError) as info:
        require_params(["ni", "nj", "nk"], {"nj": 1}, what="gemm.c:gemm#0", hint="give --param {name}=N")
    assert str(info.value) == "gemm.c:gemm#0: missing value for parameter(s) ni, nk; give --param ni=N"


def test_a_value_that_is_no_integer_is_named() -> None:
    with pytest.raises(ParameterError, match=r"job 3: parameter values must be integers, got \{'n': 'ten'\}"):
        require_params(["n"], {"n": "ten"}, what="job 3")


def test_the_harness_says_the_same_line() -> None:
    scop = extract_scops(GEMM).scops[0]
    with pytest.raises(ParameterError) as info:
        Harness(scop, {"ni": 8})
    assert str(info.value) == f"{scop.name}: missing value for parameter(s) nj, nk; give --param nj=N"

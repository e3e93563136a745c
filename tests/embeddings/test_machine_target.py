"""The machine target: its signature, the measured peaks, their cache by signature, and `perfembed target`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import embeddings.features.machine as machine
import service.core.machine as machine_core
from embeddings.features import (
    MachinePeaks,
    load_or_measure,
    machine_signature,
    measure_machine,
)
from loopnest.config import get_settings
from service.commands.features import target_app


@pytest.fixture(scope="module")
def quick_peaks() -> MachinePeaks:
    return measure_machine(quick=True)


def test_machine_signature_and_quick_peaks(quick_peaks: MachinePeaks) -> None:
    sig = quick_peaks.signature
    assert sig.cpu_model and sig.cores >= 1 and sig.compiler == "gcc" and sig.compiler_version
    assert sig.isa_level.startswith("x86-64") or sig.isa_level == sig.architecture
    assert sig.l1d_bytes is None or sig.l1d_bytes >= 4096
    assert len(sig.signature_hash) == 16 and sig.signature_hash == machine_signature().signature_hash
    for name in ("peak_gflops_fma", "peak_gflops_fma_1t", "peak_gflops_scalar", "peak_gflops_scalar_1t",
                 "stream_copy_gbs", "stream_scale_gbs", "stream_add_gbs", "stream_triad_gbs",
                 "stream_triad_1t_gbs"):
        assert getattr(quick_peaks, name) > 0, name
    assert quick_peaks.peak_gflops_fma_1t > quick_peaks.peak_gflops_scalar_1t  # vectors beat scalars
    assert quick_peaks.quick and quick_peaks.seconds < 10
    feats = quick_peaks.features()
    assert feats["cores"] == sig.cores and feats["log2_peak_gflops_fma"] > 0


def test_load_or_measure_caches_by_signature(tmp_path: Path, quick_peaks: MachinePeaks, monkeypatch) -> None:
    calls = []

    def fake_measure(*, cc: str = "gcc", quick: bool = False, signature=None) -> MachinePeaks:
        calls.append(signature)
        return MachinePeaks.from_dict({**quick_peaks.to_dict(), "signature": signature.to_dict()})

    monkeypatch.setattr(machine, "measure_machine", fake_measure)
    path = tmp_path / "data" / "target.json"
    first = load_or_measure(path, quick=True)
    assert path.is_file() and len(calls) == 1
    assert load_or_measure(path) == first and len(calls) == 1  # cached: the signature matches
    stale = json.loads(path.read_text())
    stale["signature"]["cpu_model"] = "some other CPU"
    path.write_text(json.dumps(stale))
    load_or_measure(path)
    assert len(calls) == 2  # a different CPU model invalidates the cache
    load_or_measure(path, refresh=True)
    assert len(calls) == 3


def test_target_command(tmp_path: Path, quick_peaks: MachinePeaks, monkeypatch) -> None:
    seen = []

    def fake_load(path: Path, *, cc: str = "gcc", quick: bool = False, refresh: bool = False) -> MachinePeaks:
        seen.append((path, refresh))
        return quick_peaks

    monkeypatch.setattr(machine_core, "load_or_measure", fake_load)
    monkeypatch.setenv("PERFEMBED_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    try:
        runner = CliRunner()
        out = runner.invoke(target_app, ["--json", "--refresh"])
        assert out.exit_code == 0, out.output
        data = json.loads(out.output)
        assert data["signature"]["signature_hash"] == quick_peaks.signature_hash
        assert seen == [(tmp_path / "target.json", True)]
        table = runner.invoke(target_app, [])
        assert table.exit_code == 0 and "GFLOP/s" in table.output
    finally:
        get_settings.cache_clear()

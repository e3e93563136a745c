"""``perfembed target``: this machine's signature and measured peaks, cached in the data directory.

The command function :func:`target` is registered by the CLI (``app.command("target")(target)``);
:data:`target_app` is the same command as a Typer app for mounting or testing on its own. Heavy
imports happen inside the command so that ``perfembed --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from embeddings.features.machine import load_or_measure
from loopnest.config import get_settings
from loopnest.frontend.cpp_check import preprocessor_problem
from loopnest.harness.sandbox import Limits, sandbox_status
from service.commands.options import make_console, where_data_lives

TARGET_CACHE_NAME = "target.json"

target_app = typer.Typer(help="Machine signature and measured peaks", no_args_is_help=False,
                         add_completion=False)


def target_cache_path(data_dir: Path | None = None) -> Path:
    """Where the measured peaks are cached: ``<data_dir>/target.json``."""
    if data_dir is None:
        data_dir = get_settings().data_dir
    return Path(data_dir) / TARGET_CACHE_NAME


def _fmt_bytes(n: int | None) -> str:
    if not n:
        return "unknown"
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"


def _rows(data: dict[str, Any]) -> list[tuple[str, str]]:
    sig = data["signature"]
    return [
        ("CPU model", sig["cpu_model"]),
        ("cores", str(sig["cores"])),
        ("ISA level", sig["isa_level"]),
        ("L1d / L2 / L3", " / ".join(_fmt_bytes(sig[k]) for k in ("l1d_bytes", "l2_bytes", "l3_bytes"))),
        ("compiler", sig["compiler_version"]),
        ("signature", sig["signature_hash"]),
        ("peak FMA, all cores", f"{data['peak_gflops_fma']:.1f} GFLOP/s"),
        ("peak FMA, 1 thread", f"{data['peak_gflops_fma_1t']:.1f} GFLOP/s"),
        ("peak scalar, all cores", f"{data['peak_gflops_scalar']:.1f} GFLOP/s"),
        ("peak scalar, 1 thread", f"{data['peak_gflops_scalar_1t']:.1f} GFLOP/s"),
        ("STREAM copy / scale", f"{data['stream_copy_gbs']:.1f} / {data['stream_scale_gbs']:.1f} GB/s"),
        ("STREAM add / triad", f"{data['stream_add_gbs']:.1f} / {data['stream_triad_gbs']:.1f} GB/s"),
        ("STREAM triad, 1 thread", f"{data['stream_triad_1t_gbs']:.1f} GB/s"),
        ("measured", f"{data['measured_at']} in {data['seconds']:.1f} s" + (" (quick)" if data["quick"] else "")),
        ("isolation", str(data["isolation"]["description"])),
        ("resource limits", str(data["isolation"]["resources"])),
        ("preprocessor", str(data["isolation"]["preprocessor"])),
    ]


@target_app.command("target")
def target(
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    refresh: bool = typer.Option(False, "--refresh", help="Measure again even if the cache matches."),
    quick: bool = typer.Option(False, "--quick", help="Shorter, noisier measurement (about a second)."),
) -> None:
    """Measure (or load from the data directory) this machine's signature and peak FLOP/s and GB/s."""
    settings = get_settings()
    path = target_cache_path(settings.data_dir)
    peaks = load_or_measure(path, cc=settings.cc, quick=quick, refresh=refresh)
    data = peaks.to_dict()
    data["cache"] = str(path)
    data["data_dir"] = str(settings.data_dir)
    data["isolation"] = {**sandbox_status(settings.sandbox, Limits.from_settings(settings)),
                         "preprocessor": preprocessor_problem(settings.sandbox) or "ok"}
    if json_out:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    table = Table("", "", title="perfembed target", show_header=False)
    for key, value in _rows(data):
        table.add_row(key, value)
    console = make_console()
    console.print(table)
    console.print(f"cached in {path}")
    console.print(where_data_lives(), highlight=False, markup=False)

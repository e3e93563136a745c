"""``perfembed target``: this machine's signature and measured peaks, cached in the data directory.

The command function :func:`target` is registered by the CLI (``app.command("target")(target)``);
:data:`target_app` is the same command as a Typer app for mounting or testing on its own. Heavy
imports happen inside the command so that ``perfembed --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.table import Table

from service.commands.options import Json, make_console
from service.core.data_dir import where_data_lives
from service.core.machine import machine_target

target_app = typer.Typer(help="Machine signature and measured peaks", no_args_is_help=False,
                         add_completion=False)


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
    json_out: Json = False,
    refresh: Annotated[bool, typer.Option("--refresh", help="Measure again even if the cache matches.")] = False,
    quick: Annotated[bool, typer.Option("--quick", help="Shorter, noisier measurement (about a second).")] = False,
) -> None:
    """Measure (or load from the data directory) this machine's signature and peak FLOP/s and GB/s."""
    data = machine_target(quick=quick, refresh=refresh)
    if json_out:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    table = Table("", "", title="perfembed target", show_header=False)
    for key, value in _rows(data):
        table.add_row(key, value)
    console = make_console()
    console.print(table)
    console.print(f"cached in {data['cache']}")
    console.print(where_data_lives(), highlight=False, markup=False)

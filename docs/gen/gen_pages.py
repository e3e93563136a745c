"""mkdocs-gen-files script (mkdocs.yml): writes the generated reference pages into the site at build time.

The pages are rendered by ``perfembed_docs.py`` beside this file, from the code as it is, so they cannot drift.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import mkdocs_gen_files

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("perfembed_docs", HERE / "perfembed_docs.py")
assert _spec is not None and _spec.loader is not None
docs = importlib.util.module_from_spec(_spec)
sys.modules["perfembed_docs"] = docs
_spec.loader.exec_module(docs)

PAGES = {
    "reference/cli.md": docs.cli_reference,
    "reference/configuration.md": docs.configuration_page,
    "reference/api.md": docs.api_reference,
    "reference/rejections.md": docs.rejections_page,
}

for page, render in PAGES.items():
    with mkdocs_gen_files.open(page, "w") as out:
        out.write(render())
    mkdocs_gen_files.set_edit_path(page, "gen/perfembed_docs.py")

# The program suite's report is written by its benchmark (perfembed bench programs --out docs/benchmarks); until one is
# committed, the site says how to make it.
if not (docs.BENCHMARKS / "programs.md").exists():
    with mkdocs_gen_files.open("benchmarks/programs.md", "w") as out:
        out.write("# Program suite\n\nNo result is committed yet. Make one with\n\n```sh\n"
                  "perfembed bench programs --out docs/benchmarks   # writes programs.json and programs.md\n```\n")

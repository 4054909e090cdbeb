"""The structure bar of issue 22 (scripts/structure prints the figures): `Memory` stays a
small composition root, adapters never import the internals behind it, no catch-all
results module comes back, and tests reach memdir only through public names."""

from __future__ import annotations

import runpy
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STRUCTURE: dict[str, Any] = runpy.run_path(str(ROOT / "scripts" / "structure"))


@cache
def figures() -> dict[str, Any]:
    found: dict[str, Any] = STRUCTURE["figures"]()
    return found


def test_memory_is_a_small_composition_root() -> None:
    found = figures()
    assert found["memory_lines"] < STRUCTURE["MEMORY_LIMIT"]
    # Its verbs live on its nouns: the class keeps open/reopen/close, host set-up and the
    # nouns built on first use (importer, exporter, answers and its `ask`).
    assert found["memory_methods"] <= 12, found["memory_method_names"]


def test_opening_memory_loads_no_heavy_noun() -> None:
    """`from memdir import Memory` (every CLI command, every hook) loads neither the
    credential guard, the answer checker, the contradiction detector nor tarfile."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memdir import Memory\n"
        "heavy = ('memdir.guard', 'memdir.answer', 'memdir.tidy.contradiction', 'tarfile')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_reading_commands_load_no_sync_or_http_code(tmp_path: Path) -> None:
    """Recall and the prompt index on a machine that never synced load neither the sync
    code (pydantic's models) nor httpx; a machine that synced still hides held notes
    (tests/sync/test_held_out.py)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memdir import Memory\n"
        f"m = Memory.open({str(tmp_path / 'p')!r}, home={str(tmp_path / 'h')!r})\n"
        "m.remember('Deploys', 'Deploys go out on Tuesdays.')\n"
        "assert m.recall('deploys').note_ids\n"
        "m.agent.prompt_index()\n"
        "import memdir.embed\n"
        "heavy = ('memdir.sync.replica', 'memdir.sync.protocol', 'pydantic', 'httpx')\n"
        "print([n for n in heavy if n in sys.modules])"
    )
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "config.toml").write_text('[embed]\nprovider = "none"\n')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_no_adapter_imports_an_internal_package() -> None:
    assert figures()["adapter_internal_pairs"] == []


def test_there_is_no_results_module() -> None:
    assert not (ROOT / "src" / "memdir" / "results.py").exists()


def test_tests_use_public_seams_only() -> None:
    assert figures()["private_reach_in_sites"] == []


def test_every_adapter_is_held_by_the_forbidden_contract() -> None:
    """A new adapter package (hooks, …) must be added to the contract, not slip past it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (forbidden,) = [c for c in contracts if c["type"] == "forbidden"]
    package = ROOT / "src" / "memdir"
    present = {f"memdir.{a}" for a in STRUCTURE["ADAPTERS"] if (package / a).is_dir()}
    assert present <= set(forbidden["source_modules"])
    internals = {f"memdir.{i}" for i in STRUCTURE["INTERNALS"]}
    assert internals <= set(forbidden["forbidden_modules"])


def test_the_detector_sees_a_reach_in(tmp_path: Path) -> None:
    """The reach-in detector is not vacuous: it flags a private attribute and import."""
    found = STRUCTURE["_private_reach_ins"]
    sample = tmp_path / "tests" / "test_sample.py"
    sample.parent.mkdir()
    sample.write_text(
        "from memdir.store.notedir import _entries\n"
        "def test_x(memory):\n"
        "    memory.index._retriever\n"
        "    memory.clock\n"
    )
    sites = found(tmp_path)
    assert len(sites) == 2, sites

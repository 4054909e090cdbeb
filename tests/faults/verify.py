"""The after-a-fault checks, run as a fresh process: `python verify.py REQUEST-JSON`.

Runs the `memdir` CLI in-process (click's runner), without any injection, in the order a
user would: one ordinary command first (`list`, the allowed recovery), then `history ID
--json` for every note on disk (all in
the project scope), `audit verify --json`, `doctor --json` and the searches
asked for. Prints one JSON object: every run with its exit code, output and traceback.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

from click.testing import CliRunner

from memdir.cli.main import main


def run(project: str, home: str, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["--project", project, "--home", home, *args], catch_exceptions=True
    )
    trace = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        trace = "".join(traceback.format_exception(*result.exc_info))
    output = result.stdout + result.stderr
    if "Traceback" in output and not trace:
        trace = output
    return {
        "args": list(args),
        "exit": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "traceback": trace,
    }


def main_() -> None:
    request = json.loads(sys.argv[1])
    project, home = request["project"], request["home"]
    runs = [run(project, home, "list", "--json")]
    for note in request["notes"]:
        runs.append(run(project, home, "history", note["id"], "--json"))
    runs.append(run(project, home, "audit", "verify", "--json"))
    runs.append(run(project, home, "doctor", "--json"))
    for word in request["search"]:
        runs.append(run(project, home, "search", word, "--json"))
    json.dump({"runs": runs}, sys.stdout)


if __name__ == "__main__":
    main_()

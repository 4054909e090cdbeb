"""`memdir ui`: serve the memory page on 127.0.0.1 and open it in the browser."""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING

import click

from memdir.cli.options import json_option

if TYPE_CHECKING:
    from memdir import Memory

__all__ = ["ui"]


@click.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free port).",
)
@click.option("--no-open", "no_open", is_flag=True, help="Do not open the browser.")
@json_option
def ui(port: int, no_open: bool, as_json: bool) -> None:
    """Serve the memory page on 127.0.0.1 and open it (read, search, edit, tidy, sync).

    The page's address holds a fresh random token for this run only; the page answers
    no one without it. It serves until interrupted (Ctrl-C).
    """
    # The web stack (Starlette, uvicorn, markdown-it) is imported only here.
    from memdir.web.serve import open_page, serve

    memory: Memory = click.get_current_context().obj.memory()

    def ready(url: str) -> None:
        if as_json:
            click.echo(json.dumps({"url": url}))
        else:
            click.echo(f"memdir memory page: {url}")
            click.echo("(stop it with Ctrl-C)")
        sys.stdout.flush()
        if not no_open:
            # In a thread: a browser that runs in the foreground (w3m, $BROWSER) must not
            # hold up the server it is about to ask for the page.
            threading.Thread(target=open_page, args=(url,), daemon=True).start()

    try:
        serve(memory, port, ready)
    finally:
        memory.close()

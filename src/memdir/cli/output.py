"""Turning results into JSON or rich text on the terminal (errors: memdir.cli.errors).

Nothing a note, a file or an archive holds reaches the terminal as a control sequence:
`console`, `err_console`, `print_columns` and `echo` pass every character through
`neutralise`, which shows C0 controls and DEL as their Unicode control pictures (ESC as
"␛", BEL as "␇"; tab and newline stay, as layout) and C1 controls and bidirectional
formatting characters as "<U+XXXX>". The consoles neutralise the text they are given —
plain strings before rich reads them, `Text` with its styles kept, anything else
(tables, rules, a progress bar) segment by segment — never the codes rich writes for its
own styling and cursor moves.
`emit_json` writes those characters as JSON's `\\uXXXX` escapes, so a document parses back
to the exact text.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import click
from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook, RenderResult
from rich.control import Control
from rich.segment import Segment
from rich.text import Span, Text

from memdir.core.note import BIDI_CONTROLS

if TYPE_CHECKING:
    from rich.progress import TaskID

__all__ = [
    "console",
    "echo",
    "emit_json",
    "err_console",
    "fmt_ms",
    "jsonable",
    "neutralise",
    "print_columns",
    "progress_bar",
    "safe_console",
    "short",
]

#: Every character a terminal may act on instead of showing: C0 (tab and newline are kept
#: apart by `_LAYOUT`), DEL, C1 — ESC and CSI start the sequences that clear the screen,
#: set the title or write the clipboard — and the bidirectional formatting characters.
_UNSAFE_CODES = (
    *range(0x20),
    0x7F,
    *range(0x80, 0xA0),
    *sorted(ord(c) for c in BIDI_CONTROLS),
)
_LAYOUT = frozenset({ord("\t"), ord("\n")})


def _shown(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # the control pictures: ␀ … ␟
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"


_SHOWN: dict[int, str] = {c: _shown(c) for c in _UNSAFE_CODES if c not in _LAYOUT}
_UNSAFE = re.compile("[" + "".join(re.escape(chr(c)) for c in _SHOWN) + "]")
#: What json.dumps(ensure_ascii=False) leaves raw (it escapes C0 itself): these occur only
#: inside JSON strings, where `\uXXXX` stands for the same character.
_JSON_ESCAPES: dict[int, str] = {c: f"\\u{c:04x}" for c in _UNSAFE_CODES if c >= 0x7F}


def neutralise(text: str) -> str:
    """`text` with every control and bidirectional formatting character shown visibly
    (see the module docstring); tab and newline are kept."""
    return text.translate(_SHOWN)


def _neutral_text(text: Text) -> Text:
    """`neutralise` over a rich `Text`, its styles kept on the same characters."""
    plain = text.plain
    found = [(m.start(), _SHOWN[ord(m.group())]) for m in _UNSAFE.finditer(plain)]
    if not found:
        return text
    starts = [at for at, _ in found]
    grown = list(accumulate(len(shown) - 1 for _, shown in found))

    def moved(offset: int) -> int:
        before = bisect_left(starts, offset)
        return offset + (grown[before - 1] if before else 0)

    return Text(
        neutralise(plain),
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
        tab_size=text.tab_size,
        spans=[Span(moved(s.start), moved(s.end), s.style) for s in text.spans],
    )


class _Neutralised:
    """A renderable shown with `neutralise` over its text segments (rich's control
    segments, such as a progress bar's cursor moves, pass as they are)."""

    def __init__(self, inner: ConsoleRenderable) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            if segment.control or not _UNSAFE.search(segment.text):
                yield segment
            else:
                yield Segment(neutralise(segment.text), segment.style)


class _Neutraliser(RenderHook):
    """The render hook of a safe console: every renderable printed, after `inner` (another
    hook) has had its turn."""

    def __init__(self, inner: RenderHook | None = None) -> None:
        self.inner = inner

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        if self.inner is not None:
            renderables = self.inner.process_renderables(renderables)
        return [_neutral_renderable(r) for r in renderables]


def _neutral_renderable(renderable: ConsoleRenderable) -> ConsoleRenderable:
    if isinstance(renderable, Text):
        return _neutral_text(renderable)
    if isinstance(renderable, Control | _Neutralised):
        return renderable
    return _Neutralised(renderable)


class _SafeConsole(Console):
    """A rich Console whose output never carries a control sequence it was given."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.push_render_hook(_Neutraliser())

    def push_render_hook(self, hook: RenderHook) -> None:
        # A live display (a progress bar) adds its renderables in a hook of its own, after
        # this console's: they are neutralised too.
        if not isinstance(hook, _Neutraliser):
            hook = _Neutraliser(hook)
        super().push_render_hook(hook)

    def print(self, *objects: Any, **options: Any) -> None:
        # Strings before rich reads them: it would drop BEL or CR unseen (and keep ESC).
        super().print(*(neutralise(o) if isinstance(o, str) else o for o in objects), **options)


def safe_console(**options: Any) -> Console:
    """A rich Console (taking Console's options) that shows what it prints as
    `neutralise` does; as `console` and `err_console` are made."""
    # emoji=False: a note's ":lock:" is shown as it is written, not as a picture.
    return _SafeConsole(**{"highlight": False, "soft_wrap": True, "emoji": False, **options})


console = safe_console()
err_console = safe_console(stderr=True)


def echo(text: str, *, nl: bool = True) -> None:
    """Print plain text on stdout, exactly but for `neutralise` (no markup, no wrapping)."""
    click.echo(neutralise(text), nl=nl)


def jsonable(value: Any) -> Any:
    """Plain JSON data from results: dataclasses (with their `hash`, `dangling` and `ok`),
    enums, paths, tuples."""
    from memdir.core.plain import plain

    return plain(value, properties=("hash", "dangling", "ok"))


def emit_json(value: Any) -> None:
    """Print a JSON document on stdout, every control and bidirectional formatting
    character in it escaped (`\\uXXXX`)."""
    text = json.dumps(jsonable(value), ensure_ascii=False, indent=2)
    click.echo(text.translate(_JSON_ESCAPES))


def fmt_ms(ms: int) -> str:
    """A Unix-ms timestamp as local-free UTC text (a time no calendar holds: as it is)."""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return f"{ms} ms"


def short(rev: str | None) -> str:
    """A revision shortened for people."""
    return rev[:12] if rev else "—"


#: The narrowest a shrinking column gets, and the space between columns.
_MIN_FLEX = 12
_GAP = "  "


def print_columns(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    flexible: Collection[int] = (),
    out: Console | None = None,
) -> None:
    """Print plain text in aligned columns, one line per row; on a terminal, fitted to its
    width.

    Columns not in `flexible` (ids, scopes, times) keep their full width and are never
    wrapped or cut, so an id can always be copied whole; on a terminal the `flexible`
    ones (summaries, tags) shrink to fit and end in "…" (piped, they stay whole). A line
    whose fixed columns alone are wider than the console is longer than the console
    rather than cut. Text only, no markup: a thousand rows take milliseconds where a rich
    Table spent ~0.4 s on its layout.
    """
    target = out or console
    header = [neutralise(_one_line(h)) for h in header]
    cells = [[neutralise(_one_line(c)) for c in row] for row in rows]
    widths = [cell_len(h) for h in header]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], cell_len(c))
    # Piped output keeps every column whole (for grep and scripts); a terminal fits.
    fit = target.is_terminal
    flex = sorted((i for i in flexible if fit and i < len(widths)), key=lambda i: widths[i])
    fixed = sum(w for i, w in enumerate(widths) if i not in flex)
    room = target.width - fixed - len(_GAP) * (len(widths) - 1)
    for left, i in enumerate(flex):
        share = room // (len(flex) - left)
        widths[i] = min(widths[i], max(share, _MIN_FLEX, cell_len(header[i])))
        room -= widths[i]
    last = len(widths) - 1

    def line(row: Sequence[str]) -> str:
        parts = []
        for i, c in enumerate(row):
            fitted = c if cell_len(c) <= widths[i] else set_cell_size(c, widths[i] - 1) + "…"
            parts.append(fitted if i == last else set_cell_size(fitted, widths[i]))
        return _GAP.join(parts).rstrip()

    target.print(line(header), markup=False, highlight=False, style="bold")
    if cells:
        target.print("\n".join(line(row) for row in cells), markup=False, highlight=False)


def _one_line(text: str) -> str:
    return " ".join(text.split()) if any(c in text for c in "\n\r\t") else text


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A transient progress bar on stderr fed by `(phase, done, total)` calls (None when
    `enabled` is False, e.g. with --json, or stderr is no terminal: a pipe or a log gets
    neither the bar nor the blank line rich leaves where it was)."""
    if not enabled or not err_console.is_terminal:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    )
    tasks: dict[str, TaskID] = {}

    def update(phase: str, done: int, total: int) -> None:
        label = {
            "index": "indexing notes",
            "embed": "embedding chunks",
            "import": "importing notes",
            "export": "exporting notes",
        }.get(phase, phase)
        if phase not in tasks:
            tasks[phase] = bar.add_task(label, total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        yield update

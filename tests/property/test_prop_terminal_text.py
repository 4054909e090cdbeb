"""Property tests for terminal-safe output (issue 24): `neutralise`, the CLI's consoles, its
JSON, and the rule that a summary written now holds no bidirectional formatting character.

The characters a terminal may act on are spelled out here again, on purpose, rather than
taken from memdir.cli.output: a test that read the code's own table could not fail when
that table left one out.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.markup import escape
from rich.text import Text

from memdir.cli.output import emit_json, neutralise, print_columns, safe_console
from memdir.core.note import check_summary_written
from memdir.errors import InvalidInput

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: C0 but tab and newline, DEL, C1, bidi: none may reach a terminal raw.
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")
#: The codes rich writes for its own styles (Select Graphic Rendition).
SGR = re.compile(r"\x1b\[[0-9;]*m")
CLEAR_SCREEN = "\x1b[2J"


def shown(char: str) -> str:
    """The documented visible form of one unsafe character (docs/note-format.md)."""
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "␡"
    return f"<U+{code:04X}>"


unsafe_chars = st.sampled_from(
    [chr(c) for c in range(0x20) if chr(c) not in "\t\n"]
    + [chr(c) for c in range(0x7F, 0xA0)]
    + list(BIDI)
)
# Text rich with what terminals act on, plus anything else Unicode holds.
texts = st.lists(st.one_of(unsafe_chars, st.text(max_size=8)), max_size=12).map("".join)
safe_texts = st.text().filter(lambda t: not UNSAFE.search(t))


@SETTINGS
@given(texts)
def test_neutralised_text_holds_nothing_a_terminal_acts_on(text: str) -> None:
    out = neutralise(text)
    assert not UNSAFE.search(out)
    assert neutralise(out) == out
    # Tab and newline are layout: they stay, as many as there were.
    assert (out.count("\t"), out.count("\n")) == (text.count("\t"), text.count("\n"))


@SETTINGS
@given(safe_texts)
def test_safe_text_is_left_exactly_as_it_is(text: str) -> None:
    assert neutralise(text) == text


@SETTINGS
@given(texts, unsafe_chars, texts)
def test_each_unsafe_character_gets_its_documented_visible_form(
    before: str, char: str, after: str
) -> None:
    assert neutralise(before + char + after) == neutralise(before) + shown(char) + neutralise(after)


@pytest.mark.parametrize(
    ("sequence", "expected"),
    [
        ("\x1b]52;c;aGFja2Vk\x07", "␛]52;c;aGFja2Vk␇"),  # OSC 52: write the clipboard
        ("\x1b[2J", "␛[2J"),  # clear the screen
        ("\x1b]0;title\x07", "␛]0;title␇"),  # set the window title
        ("\x9b31m", "<U+009B>31m"),  # C1 CSI
        ("\u202eexe.txt", "<U+202E>exe.txt"),  # right-to-left override
        ("a\r\nb\x7f", "a␍\nb␡"),
    ],
)
def test_known_attacks(sequence: str, expected: str) -> None:
    assert neutralise(sequence) == expected


def _terminal(width: int = 1000) -> tuple[Any, io.StringIO]:
    buffer = io.StringIO()
    console = safe_console(file=buffer, force_terminal=True, color_system="standard", width=width)
    return console, buffer


@SETTINGS
@given(texts)
def test_printed_strings_carry_only_richs_own_codes(text: str) -> None:
    for markup in (False, True):
        console, buffer = _terminal()
        console.print(escape(text) if markup else text, markup=markup, style="bold")
        plain = SGR.sub("", buffer.getvalue())
        assert not UNSAFE.search(plain)
    piped = io.StringIO()
    safe_console(file=piped, width=1000).print(text, markup=False)
    assert "\x1b" not in piped.getvalue()
    if "\t" not in text:  # rich lays tabs out as spaces
        assert piped.getvalue() == neutralise(text) + "\n"


# Characters a rich Text keeps as given (it drops CR, BEL, BS, VT and FF itself; tab and
# newline are laid out), so the styled range can be located in the output.
text_pieces = st.one_of(
    st.sampled_from([chr(c) for c in range(0x20) if chr(c) not in "\t\n\r\x07\x08\x0b\x0c"]),
    st.sampled_from([chr(c) for c in range(0x7F, 0xA0)] + list(BIDI)),
    st.text(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="["), max_size=6
    ),
)
styled_texts = st.lists(text_pieces, min_size=1, max_size=12).map("".join).filter(bool)


@SETTINGS
@given(styled_texts, st.data())
def test_a_styled_text_keeps_its_style_on_the_same_characters(plain: str, data: Any) -> None:
    start = data.draw(st.integers(0, len(plain) - 1))
    end = data.draw(st.integers(start + 1, len(plain)))
    text = Text(plain)
    text.stylize("bold", start, end)
    console, buffer = _terminal()
    console.print(text)
    expected = (
        neutralise(plain[:start])
        + "\x1b[1m"
        + neutralise(plain[start:end])
        + "\x1b[0m"
        + neutralise(plain[end:])
        + "\n"
    )
    assert buffer.getvalue() == expected


@SETTINGS
@given(texts, texts)
def test_tables_and_rules_are_shown_visibly_too(cell: str, title: str) -> None:
    from rich.table import Table

    console, buffer = _terminal(width=120)
    table = Table(title=escape(title))
    table.add_column(escape(title))
    table.add_row(Text(cell))
    console.print(table)
    console.rule(escape(title))
    assert not UNSAFE.search(SGR.sub("", buffer.getvalue()))


def test_richs_own_control_codes_still_reach_a_terminal() -> None:
    """A progress bar moves the cursor and clears its line: those codes are rich's, not
    the text's, and pass."""
    from rich.progress import Progress

    console, buffer = _terminal(width=80)
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"indexing {CLEAR_SCREEN}", total=2)
        progress.update(task, completed=1)
        progress.refresh()
    out = buffer.getvalue()
    assert "\x1b[2K" in out  # erase line: rich's own
    assert CLEAR_SCREEN not in out and "␛[2J" in out


def _one_line(text: str) -> str:
    return " ".join(text.split()) if any(c in text for c in "\n\r\t") else text


@SETTINGS
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=4))
def test_columns_are_aligned_after_neutralising(rows: list[tuple[str, str]]) -> None:
    """Widths are measured on what is shown: every second column starts at one offset."""
    console, buffer = _terminal()
    print_columns(("a", "b"), rows, out=console)
    lines = SGR.sub("", buffer.getvalue()).split("\n")[1:-1]
    shown_rows = [(neutralise(_one_line(a)), neutralise(_one_line(b))) for a, b in rows]
    width = max(1, *(cell_len(a) for a, _ in shown_rows))
    assert len(lines) == len(rows)
    for line, (first, second) in zip(lines, shown_rows, strict=True):
        assert not UNSAFE.search(line)
        assert line == (first + " " * (width - cell_len(first)) + "  " + second).rstrip()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@SETTINGS
@given(json_values)
def test_json_output_parses_back_to_the_exact_text_and_escapes_the_rest(value: Any) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit_json(value)
    assert json.loads(out.getvalue()) == value
    assert not UNSAFE.search(out.getvalue())


@SETTINGS
@given(texts)
def test_a_summary_is_written_only_without_a_bidi_character(summary: str) -> None:
    if any(c in BIDI for c in summary):
        with pytest.raises(InvalidInput) as caught:
            check_summary_written(summary)
        assert not UNSAFE.search(str(caught.value))
        first = next(c for c in summary if c in BIDI)
        assert f"U+{ord(first):04X}" in str(caught.value)
    else:
        check_summary_written(summary)

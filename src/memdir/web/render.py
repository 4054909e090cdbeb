"""Note bodies as HTML that cannot run script: markdown-it-py with raw HTML off, link URLs
limited to http, https, mailto and in-page `#/note/ID` links, and `[[id]]` wiki links.

Everything a body holds is escaped by the renderer; a link whose URL is not allowed is
not made (its Markdown stays as text), images are not rendered as images (a note cannot
make the page fetch anything), and the URL is checked after markdown-it has decoded
entities and escapes, so `&#106;avascript:` is seen as what it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from memdir.core.ids import ID_PATTERN
from memdir.core.links import LINK_PATTERN

__all__ = ["NOTE_LINK", "allowed_url", "render_body"]

#: The page's own links to a note: `#/note/` and the note's id.
NOTE_LINK = "#/note/"
_SCHEMES = ("http:", "https:", "mailto:")
_NOTE_HREF = re.compile(rf"#/note/{ID_PATTERN.pattern}")


def allowed_url(url: str) -> bool:
    """Whether a link may point at `url`: http(s), mailto, or the page's note links."""
    text = url.strip()
    if _NOTE_HREF.fullmatch(text):
        return True
    lowered = text.lower()
    return any(lowered.startswith(s) and len(lowered) > len(s) for s in _SCHEMES)


def _wikilink(state: StateInline, silent: bool) -> bool:
    """`[[id]]` as a `wikilink` token holding the id (anything else is left to the others)."""
    if not state.src.startswith("[[", state.pos):
        return False
    match = LINK_PATTERN.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = match.group(1)
    state.pos = match.end()
    return True


class _Markdown(MarkdownIt):
    """CommonMark whose links may point only where `allowed_url` says."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return allowed_url(url)


def _make() -> MarkdownIt:
    md = _Markdown("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.inline.ruler.before("link", "wikilink", _wikilink)

    def link_open(
        renderer: RendererHTML,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        token = tokens[idx]
        href = str(token.attrGet("href") or "")
        if not href.startswith(NOTE_LINK):
            token.attrSet("rel", "noopener noreferrer nofollow")
        return renderer.renderToken(tokens, idx, options, env)

    def wikilink(
        renderer: RendererHTML,
        tokens: Sequence[Token],
        idx: int,
        options: OptionsDict,
        env: EnvType,
    ) -> str:
        from markdown_it.common.utils import escapeHtml

        target = tokens[idx].content
        known: Mapping[str, str | None] = env.get("links", {})
        classes = "wikilink" if target in known else "wikilink dangling"
        summary = known.get(target)
        title = f' title="{escapeHtml(summary)}"' if summary else ""
        if target not in known:
            title = ' title="no such note"'
        # `target` matched LINK_PATTERN: lowercase letters, digits and dashes only.
        return f'<a href="{NOTE_LINK}{target}" class="{classes}"{title}>{escapeHtml(target)}</a>'

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("wikilink", wikilink)
    return md


_MD = _make()


def render_body(body: str, links: Mapping[str, str | None] | None = None) -> str:
    """A note body as safe HTML. `links` maps each `[[target]]` that names a note to its
    summary (None: not shown); a target missing from it is marked dangling."""
    env: dict[str, Any] = {"links": dict(links or {})}
    html: str = _MD.render(body, env)
    return html

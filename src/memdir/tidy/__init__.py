"""Tidy-up findings (§6): same topic, broken link, missing file, unused, too long and
contradiction — pure functions over notes; `memdir.tidy.contradiction` holds the model-free
contradiction detector."""

"""Ranking notes against text: nearest-note similarity and a simple lexical search."""

from memdir.retrieve.similar import MODES, Hit, Neighbour, nearest_notes, search_notes

__all__ = ["MODES", "Hit", "Neighbour", "nearest_notes", "search_notes"]

"""Ranking notes against text: lexical, vector and hybrid search, nearest notes."""

from memdir.retrieve.service import MODES, Chunk, Hit, ReindexStats, Retriever
from memdir.retrieve.similar import Neighbour

__all__ = ["MODES", "Chunk", "Hit", "Neighbour", "ReindexStats", "Retriever"]

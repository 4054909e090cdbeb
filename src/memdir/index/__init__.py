"""Derived SQLite search index: schema, tokenising, chunking, full-text and vectors."""

"""Derived SQLite search index: schema, tokenising, query analysis and filters, chunking,
full-text and vectors."""

"""Connecting agent clients: their config files (the installer) and the grants they use."""

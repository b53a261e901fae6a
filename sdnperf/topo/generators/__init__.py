"""One module per family of topology generators; each exposes GENERATORS (see registry.py)."""

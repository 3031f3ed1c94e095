"""Model providers behind one narrow protocol (see base.py)."""

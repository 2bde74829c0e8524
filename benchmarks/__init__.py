"""Command-line experiments (``python -m benchmarks.compare --n 12`` and friends)."""

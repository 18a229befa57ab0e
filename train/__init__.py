"""Command-line jobs: training, evaluation and benchmarks (``python -m train.<job>``)."""

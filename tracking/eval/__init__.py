"""Evaluation of the tracker: :mod:`.bench` (``swaycam bench tracker``: ours against raw
MediaPipe, lag and jitter measures). Product code never imports it (tests/test_layers.py)."""

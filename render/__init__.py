"""swaycam render package."""

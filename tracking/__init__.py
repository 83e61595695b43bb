"""swaycam tracking package."""

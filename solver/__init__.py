"""swaycam solver package."""

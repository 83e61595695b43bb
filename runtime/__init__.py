"""swaycam runtime: the realtime loop, CLI, local service and configuration."""

"""swaycam subcommands (each module: add_parser(subparsers))."""

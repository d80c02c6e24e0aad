"""What a command does, below the CLI: the pair pipeline and the registry run."""

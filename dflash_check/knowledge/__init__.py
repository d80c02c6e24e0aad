"""What the tool knows about each serving engine, organised by engine and release."""

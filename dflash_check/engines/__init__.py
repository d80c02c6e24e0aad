"""Serving engines: the command line that starts one, its HTTP client, its metrics, the launch."""

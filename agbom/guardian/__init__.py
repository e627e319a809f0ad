"""guardian layer."""

"""scan layer."""

"""Passes above one chip: a model cut into pipeline stages over the chips of a system."""

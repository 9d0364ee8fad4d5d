"""Passes on graph IR: precision, StableHLO conversion, rolling identical layers."""

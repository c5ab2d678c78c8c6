"""Shipped suites (YAML), installed as package data so `rageval suite demo` works after `pip install .`."""

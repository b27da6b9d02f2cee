"""Shipped titles. Importing this package registers each of them (one import per title)."""

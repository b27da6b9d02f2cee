"""Questhall services: kernel (pure), games (pure), adapters (Redis) and services (processes)."""

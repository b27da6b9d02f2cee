"""Long-running services: game worker, projector, the consumer-group loop, health, logging, one-process serve (layer 5)."""

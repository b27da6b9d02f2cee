"""Text front-ends for people: the chat kit (and its platform adapters) and the terminal client (layer 5)."""

"""One-machine running: embedded Valkey (and a Redis Cluster of them), the demo, scenario runners."""

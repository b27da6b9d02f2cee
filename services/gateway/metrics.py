"""Prometheus metrics of one gateway (a registry of its own, so several apps can coexist).

- ``questhall_gateway_commands_total{title, outcome}`` -- outcome ``accepted``, ``rejected``,
  ``timeout``;
- ``questhall_gateway_command_seconds{title}`` -- submit to outcome, seconds (histogram);
- ``questhall_consumer_group_lag{group}`` -- entries not yet delivered plus delivered and not
  acknowledged, summed over partitions (``worker:<title>`` over command streams, ``projector``
  over partition logs), read at scrape time;
- ``questhall_projection_lag`` -- the same for the ``projector`` group: events appended but not
  yet in the read models;
- ``questhall_gateway_sockets{kind}`` -- open WebSockets (``seat``, ``spectator``);
- ``questhall_gateway_socket_reads{source}`` -- what sockets sent since the process started was
  read from: ``redis`` (one round trip each) or ``shared`` (another socket's read of the same
  game and reader, no round trip; services/gateway/fanout.py), a running total set at scrape;
- ``questhall_gateway_reads_refused_total{reason}`` -- reads refused 429 (``rate``: the address's
  bucket is empty, ``in_flight``: it has ``QUESTHALL_READS_IN_FLIGHT`` being answered, ``socket``: a
  socket's first read, close 4429);
- ``questhall_gateway_reads_in_flight`` -- reads being answered (every address), set at scrape.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

CONTENT_TYPE = "text/plain; version=0.0.4"
"""The media type of ``/metrics`` (Prometheus text format 0.0.4); Litestar adds ``; charset=utf-8``
to every ``text/`` type (naming it here too made the header say it twice, which strict parsers
such as Go's ``mime.ParseMediaType`` refuse)."""


class Metrics:
    """The gateway's metric families in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commands = Counter("questhall_gateway_commands", "Commands submitted through the gateway.",
                                ["title", "outcome"], registry=self.registry)
        self.latency = Histogram("questhall_gateway_command_seconds", "Command latency, submit to outcome (s).",
                                 ["title"], registry=self.registry,
                                 buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
        self.group_lag = Gauge("questhall_consumer_group_lag", "Undelivered plus pending entries per consumer group.",
                               ["group"], registry=self.registry)
        self.projection_lag = Gauge("questhall_projection_lag", "Events appended but not yet projected.",
                                    registry=self.registry)
        self.sockets = Gauge("questhall_gateway_sockets", "Open WebSockets.", ["kind"], registry=self.registry)
        self.socket_reads = Gauge("questhall_gateway_socket_reads", "Socket catch-ups by source (redis, shared): a running total.",
                                  ["source"], registry=self.registry)
        self.reads_refused = Counter("questhall_gateway_reads_refused", "Reads refused 429 (rate, in_flight, socket).",
                                     ["reason"], registry=self.registry)
        self.reads_in_flight = Gauge("questhall_gateway_reads_in_flight", "Reads being answered (every address).",
                                     registry=self.registry)

    def command(self, title: str, outcome: str, seconds: float) -> None:
        """Count one command outcome and observe its latency (seconds)."""
        self.commands.labels(title=title, outcome=outcome).inc()
        self.latency.labels(title=title).observe(seconds)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)

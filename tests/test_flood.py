"""The flood test's slice in `make test` (tests/flood.py; `make flood` runs 5,000 sockets, 3,000
creates, 3,000 refused commands and 1,500 reads from one address): the gateway (its own process,
as deployed) keeps answering another client, who plays from an address of its own, and holds
every socket to the end; the flood gets its limits (creates 429 past the per-address limit,
commands refused, reads 429 past the address's read admission, none 5xx), and nothing logs a
traceback. Outcomes only, never a timing."""

from __future__ import annotations

import anyio

from tests.flood import flood


def test_a_small_flood_is_bounded_and_answered(redis_url):
    out = anyio.run(lambda: flood(redis_url, 150, 150, 150, 1, reads=600, read_concurrency=200))
    assert out["honest_requests"] > 0 and out["honest_game_version"] > 0
    assert out["honest_errors"] == {}, out  # every request of the other client succeeded, also under the read flood
    assert out["reads_honest_requests"] > 0 and out["reads_honest_errors"] == {}, out
    reads = dict(out["reads_by_status"])  # the default read admission (100 per s, bursts of 200, 16 at once per address)
    reads.pop("retried_after_disconnect", None)  # a kept-alive connection closed as it was reused: sent again once
    statuses = {k: v for k, v in reads.items() if k.isdigit()}
    assert set(statuses) == {"200", "429"}, out  # answered or refused 429: no 5xx
    assert 600 - sum(statuses.values()) <= 6, out  # transport failures of the flood's client (once in a loaded full run)
    assert reads["429"] > 0, out
    assert out["log_reads_refused_lines"] >= 1, out  # a line per 10 s, not one per refusal
    assert out["log_reads_refused_lines"] <= 1 + out["reads_seconds"] / 10 + 1, out
    assert out["sockets_held"] == 150 and out["sockets_refused"] == 0, out  # still open at the end
    assert out["sockets_closed_after_open"] == {}, out
    got = out["creates_by_status"]  # the per-address limit is creates // 3 per minute (a sliding window
    assert set(got) == {"201", "429"} and got["201"] + got["429"] == 150  # the run may straddle two)
    assert got["201"] <= 2 * 50 and got["429"] >= 50 - 2, out
    assert sum(out["refused_by_code"].values()) == 150
    assert set(out["refused_by_code"]) <= {"not_your_turn", "rate_limited", "stale_version"}, out
    assert out["log_tracebacks"] == 0 and out["log_internal_errors"] == 0, out  # the gateway process's log

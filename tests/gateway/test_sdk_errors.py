"""The SDK turns any refused answer into GatewayError, even a non-JSON page from a proxy."""

from __future__ import annotations

import anyio
import httpx
import pytest

from services.sdk import Gateway, GatewayError


def test_a_non_json_error_page_is_a_gateway_error():
    async def main():
        gw = Gateway("http://proxy.invalid")
        await gw.http.aclose()
        gw.http = httpx.AsyncClient(base_url="http://proxy.invalid/v1", transport=httpx.MockTransport(
            lambda req: httpx.Response(502, text="<html>Bad Gateway</html>")))
        with pytest.raises(GatewayError) as e:
            await gw.titles()
        assert e.value.status == 502 and "Bad Gateway" in e.value.message
        await gw.aclose()

    anyio.run(main)

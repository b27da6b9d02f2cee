"""The gateway serves every folder of clients/web with an index.html (``/play``, ``/audit``), with a strict CSP."""

from __future__ import annotations

from litestar import Litestar
from litestar.testing import TestClient

from services.gateway.web import CSP, web_dir, web_routers


def test_play_is_served_with_a_strict_policy():
    app = Litestar(route_handlers=web_routers())
    with TestClient(app) as client:
        page = client.get("/play/")
        assert page.status_code == 200 and 'src="/play/app.js"' in page.text
        assert page.headers["content-security-policy"] == CSP and "script-src 'self'" in CSP
        assert page.headers["x-content-type-options"] == "nosniff" and page.headers["cache-control"] == "no-cache"
        js = client.get("/play/app.js")
        assert js.status_code == 200 and "javascript" in js.headers["content-type"]
        assert client.get("/play/no-such-file.js").status_code == 404


def test_every_folder_with_an_index_is_mounted_except_api_names(tmp_path):
    for name in ("audit", "v1", "schema", "_private", "noindex"):
        (tmp_path / name).mkdir()
        if name != "noindex":
            (tmp_path / name / "index.html").write_text(f"<p>{name}</p>")
    paths = sorted(r.path for r in web_routers(tmp_path))
    assert paths == ["/audit"]
    assert web_routers(tmp_path / "missing") == []
    assert (web_dir() / "play" / "index.html").is_file()

"""The GX Data Docs' CDN links become local copies, relative to each page, when the copies are installed."""

from __future__ import annotations

from cdc_pipelines.quality.gx_static import FILES, FOLDERS, VENDOR, available, localize

JQUERY = "https://code.jquery.com/jquery-3.7.1.min.js"
TABLE_CSS = "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.css"
VEGA = "https://cdn.jsdelivr.net/npm/vega@5"


def _node_modules(tmp_path):
    root = tmp_path / "node_modules"
    for path in FILES.values():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"/* {path} */")
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "fa-solid-900.woff2").write_bytes(b"font")
    return root


def _page(url_a: str, url_b: str) -> str:
    return f'<link href="{url_b}" rel="stylesheet"><script src="{url_a}"></script><script src="{VEGA}"></script>'


def test_pages_point_at_local_copies_at_their_depth(tmp_path):
    root = _node_modules(tmp_path)
    site = tmp_path / "gx"
    (site / "validations" / "suite" / "run").mkdir(parents=True)
    (site / "index.html").write_text(_page(JQUERY, TABLE_CSS))
    (site / "validations" / "suite" / "run" / "v.html").write_text(_page(JQUERY, TABLE_CSS))

    assert localize(site, root) is True
    index = (site / "index.html").read_text()
    assert 'src="static/vendor/jquery/dist/jquery.min.js"' in index
    assert 'href="static/vendor/bootstrap-table/dist/bootstrap-table.min.css"' in index
    deep = (site / "validations" / "suite" / "run" / "v.html").read_text()
    assert 'src="../../../static/vendor/jquery/dist/jquery.min.js"' in deep
    assert VEGA in deep and "unpkg.com" not in deep  # profiling charts only: left as they were
    assert (site / VENDOR / "jquery/dist/jquery.min.js").read_text() == "/* jquery/dist/jquery.min.js */"
    assert (site / VENDOR / "@fortawesome/fontawesome-free/webfonts/fa-solid-900.woff2").is_file()


def test_without_local_copies_nothing_changes(tmp_path):
    site = tmp_path / "gx"
    site.mkdir()
    (site / "index.html").write_text(_page(JQUERY, TABLE_CSS))
    assert available(tmp_path / "nowhere") is False
    assert localize(site, tmp_path / "nowhere") is False
    assert (site / "index.html").read_text() == _page(JQUERY, TABLE_CSS) and not (site / "static").exists()

"""GX Data Docs without the internet: the CSS and scripts its pages take from public CDNs, served from local
copies instead.

GX 1.x ships only its own two stylesheets; Bootstrap, jQuery, bootstrap-table (which fills the tables),
Popper, Font Awesome and the datepicker come from CDNs. `scripts/setup` installs those exact versions from
the npm registry into `.venv/share/cdc_pipelines/gx-static` (or wherever CDC_GX_STATIC points); after GX
writes a site, `localize` copies the files it needs into `gx/static/vendor/` and points every page at them.
The Vega scripts (profiling charts, unused by our validation pages) and GX's logo image keep their URLs.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

# the npm packages, at the versions GX's templates name
PACKAGES = (
    "bootstrap@4.3.1",
    "jquery@3.7.1",
    "popper.js@1.12.9",
    "bootstrap-table@1.19.1",
    "@fortawesome/fontawesome-free@6.6.0",
    "bootstrap-datepicker@1.9.0",
    "@forevolve/bootstrap-dark@1.1.0",
)
_TABLE = "bootstrap-table/dist"
_FILTER = f"{_TABLE}/extensions/filter-control"
# CDN URL -> file under node_modules
FILES = {
    "https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css": "bootstrap/dist/css/bootstrap.min.css",
    "https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.min.js": "bootstrap/dist/js/bootstrap.min.js",
    "https://code.jquery.com/jquery-3.7.1.min.js": "jquery/dist/jquery.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js": "popper.js/dist/umd/popper.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.css": f"{_TABLE}/bootstrap-table.min.css",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.js": f"{_TABLE}/bootstrap-table.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/extensions/filter-control/bootstrap-table-filter-control.min.js": (
        f"{_FILTER}/bootstrap-table-filter-control.min.js"
    ),
    # GX names 1.19.0 for the filter-control CSS; 1.19.1's is the same stylesheet
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.min.css": (
        f"{_FILTER}/bootstrap-table-filter-control.min.css"
    ),
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/bootstrap-table-filter-control.css": (
        f"{_FILTER}/bootstrap-table-filter-control.css"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.6.0/css/all.min.css": (
        "@fortawesome/fontawesome-free/css/all.min.css"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/css/bootstrap-datepicker.min.css": (
        "bootstrap-datepicker/dist/css/bootstrap-datepicker.min.css"
    ),
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/js/bootstrap-datepicker.min.js": (
        "bootstrap-datepicker/dist/js/bootstrap-datepicker.min.js"
    ),
    "https://cdn.jsdelivr.net/npm/@forevolve/bootstrap-dark@1.1.0/dist/css/bootstrap-prefers-dark.css": (
        "@forevolve/bootstrap-dark/dist/css/bootstrap-prefers-dark.css"
    ),
}
FOLDERS = ("@fortawesome/fontawesome-free/webfonts",)  # all.min.css loads its fonts from ../webfonts/
VENDOR = Path("static") / "vendor"


def static_root() -> Path:
    """node_modules of the local copies: CDC_GX_STATIC, else where scripts/setup installs them."""
    default = Path(sys.prefix) / "share" / "cdc_pipelines" / "gx-static"
    return Path(os.environ.get("CDC_GX_STATIC", default)) / "node_modules"


def available(root: Path | None = None) -> bool:
    root = root or static_root()
    return all((root / path).is_file() for path in FILES.values())


def localize(site: Path, root: Path | None = None) -> bool:
    """Copy the local files into `site/static/vendor/` and point every page of `site` at them; False (and
    nothing changed) when they are not installed."""
    root = root or static_root()
    if not available(root):
        return False
    vendor = site / VENDOR
    for path in {*FILES.values()}:
        (vendor / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / path, vendor / path)
    for folder in FOLDERS:
        shutil.copytree(root / folder, vendor / folder, dirs_exist_ok=True)
    pattern = re.compile("|".join(re.escape(url) for url in sorted(FILES, key=len, reverse=True)))
    for page in site.rglob("*.html"):
        prefix = os.path.relpath(vendor, page.parent).replace(os.sep, "/")
        text = page.read_text(encoding="utf-8")
        page.write_text(pattern.sub(lambda m, p=prefix: f"{p}/{FILES[m.group(0)]}", text), encoding="utf-8")
    return True

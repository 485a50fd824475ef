"""The Dagster UI in a real browser: `dagster-webserver` over a small materialized day, its asset graph and
`canonical_changes`' partitions page rendered by headless Chromium, checked from the DOM and screenshots.

The instance's dagster.yaml switches off telemetry and the first-visit dialog (`nux`), as a user would.
The webserver runs in its own process group and is stopped by that id.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from assets.graph import build_assets, build_resources
from assets.keys import CANONICAL, raw_key
from cdc_pipelines.extract.catalog import load_catalog
from tests.conftest import resource
from tests.quality.png import colours, read_png

ROOT = Path(__file__).resolve().parents[2]
DAY = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
WIDTH, HEIGHT = 1400, 900
ASSET_QUERY = '{"query": "{ shouldShowNux assetNodes { assetKey { path } } }"}'
GREEN_MIN = 150  # the partition bar's materialized colour is a clear green


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _inputs(tmp_path: Path, home: Path) -> tuple[dict[str, str], dict]:
    """One topic of 4 canal messages for yesterday and an instance without telemetry and first-visit
    dialog: the webserver's environment, and the resources to materialize with."""
    raw = tmp_path / "raw" / "orders" / f"dt={DAY}"
    raw.mkdir(parents=True)
    shutil.copy(resource("oms-canal", "seed.jsonl"), raw / "part-0.jsonl")
    catalog = tmp_path / "catalog.yaml"
    catalog.write_text("topics:\n  - {name: orders, format: oms-canal, targets: [oms-default]}\n")
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\nnux:\n  enabled: false\n")
    env = {k: v for k, v in os.environ.items() if k != "CDC_START_DATE"}  # the default window, as a user has
    env |= {
        "DAGSTER_HOME": str(home),
        "CDC_CATALOG": str(catalog),
        "CDC_RAW_ROOT": str(tmp_path / "raw"),
        "CDC_LAKE_ROOT": str(tmp_path / "lake"),
        "PYTHONPATH": str(ROOT),
    }
    return env, build_resources(catalog, tmp_path / "raw", tmp_path / "lake", data_docs=False)


def _materialize_one_day(home: Path, resources: dict) -> None:
    """The day's raw and canonical assets (the rest of the graph is shown, not run: the test stays short)."""
    graph = build_assets(load_catalog(resources["catalog"].path))
    run = [a for a in graph if not isinstance(a, dg.AssetChecksDefinition) and a.key in (raw_key("orders"), CANONICAL)]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert dg.materialize(run, resources=resources, partition_key=DAY, instance=instance).success
        assert instance.get_materialized_partitions(CANONICAL) == {DAY}


def _wait_for_assets(url: str, server: subprocess.Popen, timeout: float = 90) -> dict:
    """Poll GraphQL until the code location has loaded its assets; the answer's data."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "dagster-webserver exited"
        try:
            request = urllib.request.Request(
                f"{url}/graphql", data=ASSET_QUERY.encode(), headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                data = json.load(response)["data"]
            if data["assetNodes"]:
                return data
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError("dagster-webserver did not load the code location in time")


def _chromium(tmp_path: Path, url: str, name: str) -> tuple[str, Path]:
    """The page's DOM after its scripts ran, and a screenshot of it."""
    png = tmp_path / f"{name}.png"
    command = [
        shutil.which("chromium") or "/usr/bin/chromium",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={tmp_path / f'profile-{name}'}",
        f"--window-size={WIDTH},{HEIGHT}",
        "--virtual-time-budget=20000",
        f"--screenshot={png}",
        "--dump-dom",
        url,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout, png


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _stop(server: subprocess.Popen, grace: float = 20) -> bool:
    """SIGTERM to the webserver's process group (it and the code server it started), SIGKILL to whatever
    lingers after `grace` seconds; True when all went on SIGTERM."""
    os.killpg(server.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and (server.poll() is None or _group_alive(server.pid)):
        time.sleep(0.2)
    clean = not _group_alive(server.pid)
    if not clean:
        os.killpg(server.pid, signal.SIGKILL)
    server.wait(timeout=10)
    return clean


def _greens(png: Path) -> int:
    return sum(n for (r, g, b), n in colours(png).items() if g >= GREEN_MIN and r < 100 and b < 160)


@pytest.mark.system
def test_asset_graph_and_partitions_page_in_headless_chromium(spark, tmp_path):
    home = tmp_path / "dagster_home"
    env, resources = _inputs(tmp_path, home)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    webserver = Path(sys.executable).parent / "dagster-webserver"
    command = [str(webserver), "-h", "127.0.0.1", "-p", str(port), "-m", "assets.definitions", "-d", str(ROOT)]
    with dg.DagsterInstance.from_config(str(home)):  # its storage created once, before two processes open it
        pass
    server = subprocess.Popen(
        command, env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        _materialize_one_day(home, resources)  # while the webserver loads the code location
        data = _wait_for_assets(url, server)
        keys = {"/".join(n["assetKey"]["path"]) for n in data["assetNodes"]}
        assert keys == {"raw/orders", "canonical_changes", "targets/oms_default", "quality_report", "table_snapshots"}
        assert data["shouldShowNux"] is False  # dagster.yaml's nux setting: no first-visit dialog

        # the asset graph of canonical_changes' group, with its upstream and downstream assets
        group, group_png = _chromium(tmp_path, f"{url}/locations/assets.definitions/asset-groups/canonical", "group")
        assert "Join the Dagster community" not in group
        for label in ("canonical_changes", "orders", "quality_report", "oms_default", "Spark", "Delta Lake"):
            assert label in group, label
        assert ">30 partitions<" in group  # the default window: a month of days, not years

        page, page_png = _chromium(tmp_path, f"{url}/assets/canonical_changes?view=partitions", "partitions")
        assert DAY in page and "Materialized (1" in page and "Missing (29" in page
    finally:
        stopped = _stop(server)
    assert stopped, "the webserver's process group outlived SIGTERM"
    for png in (group_png, page_png):
        assert read_png(png)[:2] == (WIDTH, HEIGHT)
        assert len(colours(png)) > 20  # a rendered page, not a blank one
    assert _greens(page_png) > 20 and _greens(group_png) == 0  # the materialized day in the partition bar

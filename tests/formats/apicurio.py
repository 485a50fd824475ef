"""A real schema registry for the system tests: Apicurio Registry 3.3.3 (in-memory storage), whose
`/apis/ccompat/v7` is Confluent's API, on 127.0.0.1, started and stopped by pid.

The app (`io.apicurio:apicurio-registry-app:3.3.3`, classifier `all`, type `tar.gz`, a Quarkus fast-jar)
comes from Maven Central through `mvn dependency:copy` into a cache folder (CDC_APICURIO_CACHE, default
~/.cache/cdc_pipelines/apicurio-VERSION), fetched once by the test itself. It needs Java 21 or newer: this
machine kind ships a Temurin 25 JDK in /usr/lib/jvm beside the default Java 17, not registered as an
alternative; `JAVA_HOME` is set for the registry's process alone.
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.extract.kafka_broker import free_port
from tests.processes import stop_by_pid

VERSION = "3.3.3"
ARTIFACT = f"io.apicurio:apicurio-registry-app:{VERSION}:tar.gz:all"
JVM_FOLDER = Path("/usr/lib/jvm")
START_TIMEOUT_S = 120


class NoJava21(RuntimeError):
    """No Java 21 or newer on this machine: the registry cannot run (the test fails, it does not skip)."""


def java_home() -> Path:
    """A JDK of major version 21 or newer: `temurin-25*` first, then any other in the system's JVM folder."""
    found = []
    for home in sorted(JVM_FOLDER.glob("*")):
        match = re.search(r"(?:temurin|jdk|java)-(\d+)", home.name)
        if match and int(match[1]) >= 21 and (home / "bin" / "java").exists():
            found.append((not home.name.startswith("temurin-25"), -int(match[1]), home))
    if not found:
        raise NoJava21(
            f"Apicurio Registry {VERSION} needs Java 21+; no temurin-25* (or other JDK >= 21) in {JVM_FOLDER}"
        )
    return sorted(found)[0][2]


def registry_app(version: str = VERSION) -> Path:
    """The folder holding `quarkus-run.jar`, fetched from Maven Central on first use."""
    cache = Path(os.environ.get("CDC_APICURIO_CACHE", Path.home() / ".cache" / "cdc_pipelines" / f"apicurio-{version}"))
    app = cache / "app"
    if (app / "quarkus-run.jar").exists():
        return app
    cache.mkdir(parents=True, exist_ok=True)
    download = cache / "dl"
    tarball = download / f"apicurio-registry-app-{version}-all.tar.gz"
    if not tarball.exists():
        subprocess.run(
            ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={ARTIFACT}", f"-DoutputDirectory={download}"],
            check=True, timeout=900, cwd=cache,
        )  # fmt: skip
    tmp = cache / "app.tmp"
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp, filter="data")
    if not (tmp / "quarkus-run.jar").exists():
        raise RuntimeError(f"no quarkus-run.jar in {tarball}")
    tmp.rename(app)
    return app


@dataclass
class Registry:
    """A running registry: Confluent's API at `url`, and its process."""

    url: str
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        """Stop the registry by its pid (`tests.processes.stop_by_pid`)."""
        stop_by_pid(self.process)


def start_registry(folder: Path) -> Registry:
    """Apicurio on free ports of 127.0.0.1 (HTTP and management), once its Confluent API answers."""
    home, app = java_home(), registry_app()
    port, management = free_port(), free_port()
    command = [
        str(home / "bin" / "java"), "-Xmx384m", "-XX:TieredStopAtLevel=1",
        "-Dquarkus.http.host=127.0.0.1", f"-Dquarkus.http.port={port}",
        "-Dquarkus.management.host=127.0.0.1", f"-Dquarkus.management.port={management}",
        "-jar", str(app / "quarkus-run.jar"),
    ]  # fmt: skip
    log = folder / "apicurio.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, env={**os.environ, "JAVA_HOME": str(home)})
    registry = Registry(f"http://127.0.0.1:{port}/apis/ccompat/v7", process, log)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Apicurio Registry exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(registry.url + "/subjects", timeout=2):
                return registry
        except OSError:
            time.sleep(0.5)
    registry.stop()
    raise RuntimeError(f"Apicurio Registry did not answer in {START_TIMEOUT_S} s: {log.read_text()[-2000:]}")

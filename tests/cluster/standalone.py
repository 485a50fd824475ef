"""A Spark standalone master and one worker on 127.0.0.1, started from the pip package's `bin/spark-class`.

Started as child processes and stopped by their own ids; ports are free ones the OS picked.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _spark_class() -> Path:
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def _alive_workers(webui: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=2) as page:
            return int(json.load(page).get("aliveworkers", 0))
    except OSError:
        return 0


def _stop(proc: subprocess.Popen) -> None:
    """Stop one daemon we started (its JVM is the child of spark-class's exec, so its own id)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextlib.contextmanager
def standalone_cluster(work: Path, memory: str = "2g", cores: int = 1, timeout: float = 120) -> Iterator[str]:
    """Yield the master URL once the worker has registered; both processes are stopped afterwards."""
    master_port, master_ui, worker_port, worker_ui = free_ports(4)
    env = os.environ | {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(work), "SPARK_WORKER_DIR": str(work)}
    work.mkdir(parents=True, exist_ok=True)
    url = f"spark://127.0.0.1:{master_port}"
    procs: list[subprocess.Popen] = []
    try:
        master_cmd = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(master_port),
                      "--webui-port", str(master_ui)]  # fmt: skip
        worker_cmd = ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--port",
                      str(worker_port), "--webui-port", str(worker_ui), "-m", memory, "-c", str(cores),
                      "--work-dir", str(work / "worker")]  # fmt: skip
        for name, cmd in (("master", master_cmd), ("worker", worker_cmd)):
            log = open(work / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
            procs.append(subprocess.Popen([str(_spark_class()), *cmd], env=env, stdout=log, stderr=log))
        deadline = time.monotonic() + timeout
        while _alive_workers(master_ui) < 1:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                logs = "\n".join((work / f"{n}.log").read_text()[-2000:] for n in ("master", "worker"))
                raise RuntimeError(f"standalone cluster did not come up:\n{logs}")
            time.sleep(1)
        yield url
    finally:
        for proc in reversed(procs):
            _stop(proc)

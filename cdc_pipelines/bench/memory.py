"""Peak resident memory of the driver, the JVM and the Python workers, sampled from /proc.

In local mode the JVM is both Spark driver and executor; its Python workers (`pyspark.daemon` and
the workers it forks, which run `mapInArrow` batches) are its children; other children of the JVM
(`bash`, `chmod`, and a JVM copy for an instant between fork and exec) are not counted. The driver
Python is this process (DuckDB runs inside it too); the Python processes it starts itself (the decode's
pool, `decode.pool`) count as Python workers. A thread samples the tree a few times a second.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
ROLES = ("driver_python", "jvm", "python_workers")


def _processes() -> dict[int, tuple[int, str, int]]:
    """pid -> (parent pid, command name, resident bytes) of every readable process."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            resident = int((entry / "statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            continue
        name_end = stat.rindex(")")
        name = stat[stat.index("(") + 1 : name_end]
        parent = int(stat[name_end + 2 :].split()[1])
        found[int(entry.name)] = (parent, name, resident)
    return found


def tree_rss(root: int) -> dict[str, int]:
    """Resident bytes of `root` and its descendants, by role."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _name, _rss) in procs.items():
        children.setdefault(parent, []).append(pid)
    totals = dict.fromkeys(ROLES, 0)
    totals["driver_python"] = procs.get(root, (0, "", 0))[2]
    stack = [(pid, False) for pid in children.get(root, [])]
    while stack:
        pid, under_jvm = stack.pop()
        parent, name, rss = procs[pid]
        if name == "java":
            totals["jvm"] += rss
            under_jvm = True
        elif name.startswith("python") and (under_jvm or parent == root):
            totals["python_workers"] += rss
        stack.extend((child, under_jvm) for child in children.get(pid, []))
    return totals


class PeakMemory:
    """Context manager recording the peak of each role while its block runs."""

    def __init__(self, interval: float = 0.2, root: int | None = None):
        self.interval = interval
        self.root = root or os.getpid()
        self.peak = dict.fromkeys(ROLES, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for role, value in tree_rss(self.root).items():
            self.peak[role] = max(self.peak[role], value)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> PeakMemory:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

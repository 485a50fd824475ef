"""Reading a number from the run's settings (`--conf`, CDC_SPARK_CONF): a malformed value fails the run, naming
its setting, before any work starts."""

from __future__ import annotations

from collections.abc import Mapping


class SettingError(ValueError):
    """A setting's value is not one it takes."""


def whole_number(conf: Mapping[str, str], setting: str, default: int) -> int:
    """The whole number (0 or more) `setting` holds in `conf`, else `default`."""
    text = str(conf.get(setting, default)).strip()
    if not text.isdigit():
        raise SettingError(f"{setting} takes a whole number, not {text!r}")
    return int(text)

"""Built-in sample messages: the examples of the format specifications, one folder per format id."""

from __future__ import annotations

from pathlib import Path

SAMPLES_ROOT = Path(__file__).parent


def sample_folder(format_id: str) -> Path | None:
    """The folder of sample messages for a format id, or None when there is none."""
    folder = SAMPLES_ROOT / format_id
    return folder if folder.is_dir() else None

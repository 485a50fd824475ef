"""The files an input names: files as given, folders walked (hidden and `_` files skipped)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class InputError(ValueError):
    """Inputs that do not exist or hold no files."""


def list_input_files(inputs: Iterable[str | Path]) -> list[str]:
    """Files named by `inputs`, folders walked recursively, hidden and `_`-prefixed files skipped."""
    files: list[str] = []
    for item in inputs:
        path = Path(item)
        if path.is_file():
            files.append(str(path.resolve()))
        elif path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
            )
            files.extend(str(p.resolve()) for p in found)
        else:
            raise InputError(f"input does not exist: {item}")
    if not files:
        raise InputError("no input files found in: " + ", ".join(map(str, inputs)))
    return files


def list_input_files_or_empty(inputs: Iterable[str | Path]) -> list[str]:
    """Like `list_input_files`, but an existing folder without files gives an empty list."""
    try:
        return list_input_files(inputs)
    except InputError:
        if all(Path(i).is_dir() for i in inputs):
            return []
        raise

"""`${NAME}` in a setting read from the environment when the setting is used: how a catalog names a secret
(Kafka's SASL password, a schema registry's credentials) without writing it down."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(value: str, missing: Callable[[str], Exception]) -> str:
    """`value` with each `${NAME}` replaced by the environment's NAME; `missing(NAME)` is raised for one unset."""

    def lookup(match: re.Match) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise missing(name)
        return os.environ[name]

    return REFERENCE.sub(lookup, value)

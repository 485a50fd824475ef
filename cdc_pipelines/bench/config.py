"""What one benchmark run covers: formats, input sizes and the block the inputs repeat."""

from __future__ import annotations

from dataclasses import dataclass

FORMATS = ("oms-canal", "oms-default", "dataworks-json", "oms-debezium", "dts-avro")
BLOCK_DAYS = 20
BLOCK_EVENTS_PER_DAY = 1000


@dataclass
class BenchConfig:
    messages: int = 250_000
    scales: tuple[int, ...] = (1, 4, 16)
    formats: tuple[str, ...] = FORMATS
    scaled_formats: tuple[str, ...] | None = None
    block_days: int = BLOCK_DAYS
    block_events_per_day: int = BLOCK_EVENTS_PER_DAY
    stages: bool = True  # at the smallest scale, also time each stage (see `bench.stages`)

    def formats_at(self, scale: int) -> tuple[str, ...]:
        """Every format at the smallest scale; only `scaled_formats` (if given) above it."""
        if scale == min(self.scales) or self.scaled_formats is None:
            return self.formats
        return tuple(f for f in self.formats if f in self.scaled_formats)

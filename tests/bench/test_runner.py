"""The benchmark runner at a tiny size: every step measured, counts that add up, a readable report."""

from __future__ import annotations

from cdc_pipelines.bench.config import BenchConfig
from cdc_pipelines.bench.report import END, START, ratios, render, write_report
from cdc_pipelines.bench.runner import STEPS, machine, run_bench
from cdc_pipelines.bench.stages import DECODE_CUTS, ENCODE_CUTS


def test_quick_bench_counts_add_up_and_report_has_every_row(spark, tmp_path):
    config = BenchConfig(messages=300, scales=(1,), formats=("oms-canal",), block_days=1, block_events_per_day=120)
    result = run_bench(spark, config, tmp_path / "work", log=lambda _s: None)

    steps = [(m["scale"], m["step"]) for m in result["measurements"]]
    assert steps == [(1, step) for step in STEPS if step != "fastavro_floor"]  # fastavro: DTS Avro only
    for m in result["measurements"]:
        assert m["seconds"] > 0 and m["bytes"] > 0
        assert set(m["peak_rss"]) == {"driver_python", "jvm", "python_workers"}
        assert m["peak_rss"]["driver_python"] > 0 and m["peak_rss"]["jvm"] > 0
    by_step = {(m["scale"], m["step"]): m for m in result["measurements"]}
    for scale in (1,):
        decode, encode = by_step[(scale, "decode")]["counts"], by_step[(scale, "encode")]["counts"]
        assert decode["read"] == 300 * scale == by_step[(scale, "spark_floor")]["records"]
        assert decode["read"] == decode["decoded"] + decode["rejected"] and decode["rejected"] > 0
        assert encode["encoded"] + encode["skipped"] == decode["events"] == by_step[(scale, "encode")]["records"]
        assert by_step[(scale, "duckdb_encode")]["records"] == decode["events"]
        # Spark's JSON file reader skips blank lines (the generated input has a few); the text reader does not
        assert decode["read"] - 5 < by_step[(scale, "spark_floor")]["counts"]["rows_written"] < decode["read"]
        assert by_step[(scale, "spark_text_floor")]["counts"]["rows_written"] == decode["read"]
        assert by_step[(scale, "encode_floor")]["records"] == decode["events"]
        assert 0 < by_step[(scale, "duckdb_decode")]["counts"]["rows_written"] <= decode["read"]
        # the architecture floors run the same Spark paths over every input row, their counts conserved
        replayed = by_step[(scale, "decode_replay")]["counts"]
        assert replayed["read"] == decode["read"] == replayed["decoded"] + replayed["rejected"]
        replayed = by_step[(scale, "encode_replay")]["counts"]
        assert replayed["encoded"] + replayed["skipped"] == decode["events"]
        assert by_step[(scale, "decode_processes")]["counts"] == decode
    assert by_step[(1, "encode")]["peak_rss"]["python_workers"] > 0  # encode runs in Python workers
    assert by_step[(1, "decode_processes")]["peak_rss"]["python_workers"] > 0  # the pool's processes
    cuts = {(s["format_id"], s["side"]): s["cuts"] for s in result["stages"]}
    assert [c for c, _ in cuts[("oms-canal", "decode")]] == list(DECODE_CUTS)
    assert [c for c, _ in cuts[("oms-canal", "encode")]] == list(ENCODE_CUTS)
    assert all(seconds > 0 for timed in cuts.values() for _, seconds in timed)

    report = tmp_path / "BENCHMARKS.md"
    report.write_text(f"# Benchmarks\n\nwritten by hand\n\n{START}\nold table\n{END}\n\nanalysis by hand\n")
    write_report(result, report)
    text = report.read_text()
    assert "written by hand" in text and "analysis by hand" in text and "old table" not in text
    assert "### 1x" in text and "### Targets" in text and "### Where the time goes" in text
    assert "| oms-canal | decode | decode in Python (and pair) |" in text
    assert "| oms-canal | encode | sort and write |" in text
    assert f"{result['machine']['cores']} cores" in text and "GB memory" in text
    assert {(r["scale"], r["step"]) for r in ratios(result["measurements"])} == {
        (1, step) for step in ("decode", "decode_processes", "encode")
    }


def test_scaling_table_lists_each_step_at_every_scale():
    def measured(scale: int, step: str, seconds: float) -> dict:
        rss = {"driver_python": 100 * 10**6, "jvm": 900 * 10**6, "python_workers": 0}
        return {"scale": scale, "format_id": "oms-canal", "step": step, "records": 1000 * scale,
                "bytes": 400_000 * scale, "seconds": seconds, "peak_rss": rss, "counts": {}}  # fmt: skip

    def rendered(scales: tuple[int, ...]) -> str:
        steps = (("spark_floor", 2.0), ("decode", 5.0), ("decode_replay", 4.0))
        measurements = [measured(s, step, secs * s) for s in scales for step, secs in steps]
        result = {"machine": machine(2), "config": {"messages": 1000}, "started": "now", "seconds": 1.0,
                  "load_avg_end": [0.0], "measurements": measurements}  # fmt: skip
        return render(result)

    text = rendered((1, 4))
    scaling = text.split("### Scaling", 1)[1]
    assert scaling.count("| oms-canal | decode |") == 2 and scaling.count("| oms-canal | spark_floor |") == 2
    assert "| 4x | 4,000 | 20.0 | 5.0 |" in scaling
    # a run without 1x still gives seconds per 1x of input, not per its smallest scale
    scaling = rendered((4, 16)).split("### Scaling", 1)[1]
    assert "| 4x | 4,000 | 20.0 | 5.0 |" in scaling and "| 16x | 16,000 | 80.0 | 5.0 |" in scaling
    targets = text.split("### Targets", 1)[1].split("### Scaling", 1)[0]
    floor = "Spark floor (`read.schema(S).json` + Parquet)"
    assert f"| 1x | oms-canal | decode | {floor} | 2.50x (<= 1.25x) | 2.00x | 1.25x |" in targets

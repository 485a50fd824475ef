"""The demo's generated extracts and catalog (used by the demo and the benchmark, not by the product)."""

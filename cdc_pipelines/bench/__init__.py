"""The benchmark: our decode and encode timed against the Spark floor, DuckDB and `cat`, in one run."""

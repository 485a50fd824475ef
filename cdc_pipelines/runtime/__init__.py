"""What every stage runs on: the SparkSession, paths on any Hadoop storage, Python-worker settings, progress."""

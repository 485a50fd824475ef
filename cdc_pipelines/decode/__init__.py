"""Lines -> codecs -> canonical events and rejects: per message, pairing, table filter, redeliveries,
the Spark runner and its counts."""

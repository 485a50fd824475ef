"""The lake: partitioned tables written atomically, their folder names, run counts, reading them back."""

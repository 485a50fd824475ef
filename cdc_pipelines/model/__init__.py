"""The canonical change: its fields, ops, logical types, `cdc.*` meta keys, values and schemas."""

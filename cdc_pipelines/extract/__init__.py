"""Reading raw topic extracts: lines with their lineage, envelopes, damaged `.gz`, format detection."""

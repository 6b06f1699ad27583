"""indexing operators (filled in by the indexing module owner)."""

"""random operators (filled in by the random module owner)."""

"""composite operators (filled in by the composite module owner)."""

"""tape."""

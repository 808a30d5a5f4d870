"""The public site and the staff desk."""

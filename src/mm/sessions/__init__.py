"""Session files: one JSON file per conversation."""

"""The agent file: schema, discovery, validation."""

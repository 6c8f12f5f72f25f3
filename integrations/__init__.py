"""Integrations of axon with other tools; each sub-package says what it guarantees."""

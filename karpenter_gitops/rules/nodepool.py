"""Placeholder: rules are being written."""

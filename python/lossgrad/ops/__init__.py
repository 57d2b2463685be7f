"""One folder per operator (lossgrad.registry discovers them; docs/contributing.md describes a folder)."""

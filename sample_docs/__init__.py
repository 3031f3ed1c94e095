"""The documents, task sets and shipped runs of LITM Explorer, as package data (no code): found with
components.core.resources.sample_path, in a checkout and in an installed wheel alike."""

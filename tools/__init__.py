"""Project tools run from the repository root (`python -m tools.reference`); not shipped."""

"""gridshift: shared utilities used by every step (paths, atomic writes, hashing, locations, errors)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gridshift")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"

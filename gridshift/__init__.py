"""gridshift, the ground floor every layer imports: the shared declarations (fields, bounds, parameters and
their ranges, locations, sources, the bundle format, the home, errors) and the I/O primitives they need (atomic
writes, hashing, bounded reads, portable math). Nothing here draws (``gridshift_plots``) or parses the command
line (``gridshift_cli``)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gridshift")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"

"""The one error type of the bundle format."""

from __future__ import annotations

from gridshift.errors import DataError


class BundleError(DataError, ValueError):
    """A bundle is missing, corrupt, of an unsupported format, or holds values outside the contract.

    Like every :class:`~gridshift.errors.DataError` it names the file and, where it applies, the
    column, the first offending rows and their values.
    """

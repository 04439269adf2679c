"""The loopback fake publishers (``tests/integration/pipelines/live``) for the tests in this folder."""

from tests.integration.pipelines.live.conftest import fake  # noqa: F401 - a fixture, used by name

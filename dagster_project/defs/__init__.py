"""The ``dg`` defs folder: definitions added with ``dg scaffold defs ...`` land here and are loaded with the
project's own (``dagster_project.definitions``)."""

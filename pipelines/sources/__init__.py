"""One module per publisher, holding both its mirror reading and its live fetching; ``registry``
lists them all."""

"""Several workers on one database: the shared update queue, leadership, job claims."""

"""One router per Iceberg REST resource."""

"""Alembic environment: runs on the connection that store.migrate hands over."""

from alembic import context

from store.schema import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
context.run_migrations()

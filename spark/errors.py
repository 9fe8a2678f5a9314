"""Errors of the Spark side, each saying what to do about it."""


class SetupError(Exception):
    """Spark cannot be started here; the message names what to install or set."""


class CatalogError(Exception):
    """The catalog answered a versioning request with an error."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status})")
        self.status = status
        self.message = message

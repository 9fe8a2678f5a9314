"""What the catalog delegates, from SAPWOOD_* variables (docs/security.md).

Signing needs only the warehouse's own credentials (the standard AWS
settings the server already reads the warehouse with), so it is offered
whenever the warehouse is on S3. Vending needs a role to assume and is off
unless ``SAPWOOD_VEND_ROLE_ARN`` names one."""

from __future__ import annotations

import os
from dataclasses import dataclass

from core.errors import InvalidInputError
from core.settings import number_setting

SIGNING = "remote-signing"
VENDING = "vended-credentials"
MODES = (VENDING, SIGNING)
DEFAULT_DURATION_S = 15 * 60
# STS refuses shorter and (for a role session, by default) longer.
MIN_DURATION_S, MAX_DURATION_S = 900, 43_200


@dataclass(frozen=True, slots=True)
class DelegationSettings:
    # Delegate even to a client that does not ask (one of MODES), or only on request.
    always: str | None = None
    # The role STS vends credentials for; None: no vending.
    role_arn: str | None = None
    duration_s: int = DEFAULT_DURATION_S
    # Where STS is (None: AWS's own, or AWS_ENDPOINT_URL_STS / AWS_ENDPOINT_URL).
    sts_endpoint: str | None = None
    # The S3 endpoint clients are told to use (None: AWS's own, or AWS_ENDPOINT_URL).
    s3_endpoint: str | None = None
    region: str = "us-east-1"

    @staticmethod
    def from_env() -> DelegationSettings:
        always = os.environ.get("SAPWOOD_ACCESS_DELEGATION") or None
        if always is not None and always not in MODES:
            raise InvalidInputError(f"SAPWOOD_ACCESS_DELEGATION must be one of {', '.join(MODES)}"
                                    f" (or unset: delegate on request), not {always!r}")
        # STS's limits.
        duration_s = int(number_setting("SAPWOOD_VEND_DURATION_S",
                                        os.environ.get("SAPWOOD_VEND_DURATION_S"),
                                        DEFAULT_DURATION_S, MIN_DURATION_S, MAX_DURATION_S,
                                        whole=True))
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or None
        return DelegationSettings(
            always=always, role_arn=os.environ.get("SAPWOOD_VEND_ROLE_ARN") or None,
            duration_s=duration_s,
            sts_endpoint=os.environ.get("AWS_ENDPOINT_URL_STS") or endpoint,
            s3_endpoint=os.environ.get("SAPWOOD_S3_CLIENT_ENDPOINT")
            or os.environ.get("AWS_ENDPOINT_URL_S3") or endpoint,
            region=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
            or "us-east-1")

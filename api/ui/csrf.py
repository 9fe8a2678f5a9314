"""Cross-site request forgery: a POST to the UI counts only when it comes
from one of the UI's own pages.

Two checks, made before the form's fields are used (api.ui.pages.form_post):

- **Origin.** The browser's ``Origin`` header (without one, the origin of
  its ``Referer``) must be the origin the request was served at: scheme,
  host and port (api.hosts has already refused host names the server does
  not serve). ``SameSite=Strict`` cookies do not stop a page on another port
  of the same host, which is the same *site*; this does. Browsers send
  ``Origin`` with every POST, so a POST with neither header is refused.
- **Token.** Every form carries a hidden ``csrf`` field: an HMAC-SHA256,
  under the catalog's signing key, of what the visitor's browser holds: its
  session cookie when signed in, else a random per-browser cookie (the
  sign-in form needs one: login CSRF). The key is in the catalog's database,
  so a token one replica issued verifies on any other; a token is good for
  one session (or browser) only. Compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from fastapi import Request, Response

from api.ui.client import COOKIE

FIELD = "csrf"
# The per-browser value a token is bound to before signing in.
BROWSER = "sapwood_ui_browser"
_PURPOSE = b"sapwood-ui-form\x00"
_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]


def issue(request: Request) -> tuple[str, str | None]:
    """The token for this page's forms, and the new per-browser value to set
    in a cookie when the browser holds nothing to bind a token to yet."""
    bound = _binding(request)
    new = None
    if bound is None:
        new = secrets.token_urlsafe(32)
        bound = ("browser", new)
    return _token(_key(request), *bound), new


def remember(response: Response, value: str) -> None:
    response.set_cookie(BROWSER, value, httponly=True, samesite="strict", path="/ui")


def refusal(request: Request, sent: str | None) -> str | None:
    """Why this POST is not the UI's own form (None: it is)."""
    served = _origin(f"{request.url.scheme}://{request.headers.get('host', '')}")
    origin = request.headers.get("origin")
    if origin is not None:
        came, shown = _origin(origin), origin
    elif (referer := request.headers.get("referer")) is not None:
        came = _origin(referer)
        shown = _shown(came)
    else:
        return ("The form came without an Origin or Referer header, so nothing shows it "
                "was sent from this catalog's own pages (browsers send Origin with "
                "every form).")
    if came is None or came != served:
        return (f"The form was sent from {_cut(shown)}, not from this catalog's own pages "
                f"at {_shown(served)}.")
    bound = _binding(request)
    if not sent or bound is None or not hmac.compare_digest(
            sent.encode(), _token(_key(request), *bound).encode()):
        return ("The form's security token is missing or is not this browser's (the page "
                "may date from before you signed in or out): reload the page and send the "
                "form again.")
    return None


def _binding(request: Request) -> tuple[str, str] | None:
    """What a token is bound to: the session when signed in, else the browser."""
    session = request.cookies.get(COOKIE)
    if session:
        return ("session", session)
    browser = request.cookies.get(BROWSER)
    return ("browser", browser) if browser else None


def _token(key: bytes, kind: str, value: str) -> str:
    mac = hmac.new(key, _PURPOSE + kind.encode() + b"\x00" + value.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def _key(request: Request) -> bytes:
    """The catalog's signing key (made by migration 0003, never changed, the
    same for every replica), read once per process."""
    state = request.app.state
    key: bytes | None = getattr(state, "ui_form_key", None)
    if key is None:
        key = state.ui_form_key = state.services.access.signing_key().encode()
    return key


def _origin(url: str) -> Origin | None:
    """(scheme, host, port) of a URL, the default port filled in; None for
    anything else (``null``, another scheme, a malformed port)."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or _PORTS[parts.scheme]


def _shown(origin: Origin | None) -> str:
    if origin is None:
        return "an unknown origin"
    scheme, host, port = origin
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + ("" if port == _PORTS[scheme] else f":{port}")


def _cut(text: str) -> str:
    return text if len(text) <= 100 else text[:100] + "…"

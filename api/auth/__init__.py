"""Authentication (tokens, API keys, OpenID Connect) and authorization
(grants, protected branches) for both HTTP APIs."""

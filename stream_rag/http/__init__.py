"""The HTTP API: the Starlette app, its routes, uploads, limits, telemetry and serving."""

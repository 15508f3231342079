"""The HTTP API: the Starlette app, its routes, limits, telemetry and serving."""

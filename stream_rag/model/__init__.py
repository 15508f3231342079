"""Chat models: the streaming backends, the local extractive generator, the fake."""

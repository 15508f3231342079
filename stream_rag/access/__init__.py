"""Who may do what: API keys, principals, the guard middleware, collections."""

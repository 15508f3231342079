"""What a text states, read alike at ingest, in the answer's checks and in the gate."""

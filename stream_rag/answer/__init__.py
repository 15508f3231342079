"""Answers: evidence and conflict checks, the prompt, conversations, the pipeline."""

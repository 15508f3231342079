"""Insights: what visitors asked, what the knowledge base could not answer, their ratings."""

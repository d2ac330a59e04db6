"""Public tests for the fair_share kata."""

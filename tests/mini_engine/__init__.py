"""Public tests of the mini_engine kata."""

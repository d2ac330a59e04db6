"""Public tests for the fp4_formats kata."""

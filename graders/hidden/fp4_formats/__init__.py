"""Hidden tests for the fp4_formats kata."""

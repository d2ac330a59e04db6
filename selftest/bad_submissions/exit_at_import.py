"""A submission that exits while being imported."""
import sys

sys.exit(3)

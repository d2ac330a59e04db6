"""The same submission without the escape: it finds no reference and fails to import.

Honest: 0
"""
raise ImportError("no way out")

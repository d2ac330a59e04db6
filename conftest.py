"""Repository root conftest: makes the repository importable; the harness lives in graders.plugin."""

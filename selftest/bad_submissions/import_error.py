"""A submission that imports a module that does not exist."""
import no_such_module_anywhere  # noqa: F401

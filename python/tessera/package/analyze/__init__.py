from .find_first_use_of_broken_modules import find_first_use_of_broken_modules  # noqa: F401
from .trace_dependencies import trace_dependencies  # noqa: F401

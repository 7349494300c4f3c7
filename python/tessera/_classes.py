"""Custom-class objects (tessera.ScriptObject) in pickles: what a pickled ScriptObject names
to be rebuilt, a plain Python function (pickle cannot refer to a function of _C itself)."""
from . import _C


def _script_object_from_state(qualified_name, state):
    """A new object of the custom class `qualified_name`, made by its def_pickle from `state`."""
    return _C._script_object_from_state(qualified_name, state)

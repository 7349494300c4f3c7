"""The single-iterator rule of IterDataPipes: each `iter(dp)` gets a new id and resets the
pipe; an older iterator that is advanced afterwards fails. The metaclass in datapipe.py
wraps every `__iter__` defined by a subclass with `guard_iter`.

Exceptions raised while iterating are annotated once, by the innermost pipe, with the pipe
and its constructor arguments, as torch does.
"""
import functools
import inspect

_FEEDBACK = ("\nFor feedback regarding this single iterator per IterDataPipe constraint, feel free to comment on "
             "this issue: https://github.com/pytorch/data/issues/45.")


def _short(obj):
    return obj.__name__ if inspect.isfunction(obj) else repr(obj)


def describe(dp):
    """`ClassName(arg=value, ...)` for the constructor arguments `dp` kept as attributes."""
    try:
        params = inspect.signature(type(dp)).parameters
    except (TypeError, ValueError):
        params = {}
    args = [f"{name}={_short(getattr(dp, name))}" for name in sorted(params) if hasattr(type(dp), name) or
            name in getattr(dp, "__dict__", {})]
    return f"{type(dp).__name__}({', '.join(args)})"


class InvalidIterator(RuntimeError):
    """Raised (as a RuntimeError) by an iterator another `iter()` of its pipe replaced."""


def _new_iterator_id(dp):
    if getattr(dp, "_is_child_datapipe", False):
        return dp._set_main_datapipe_valid_iterator_id()  # the parent pipe decides, and resets
    dp._valid_iterator_id = 0 if dp._valid_iterator_id is None else dp._valid_iterator_id + 1
    dp.reset()
    return dp._valid_iterator_id


def _check_valid(dp, iterator_id):
    if getattr(dp, "_is_child_datapipe", False):
        if not dp._check_valid_iterator_id(iterator_id):
            raise InvalidIterator("This iterator has been invalidated, because a new iterator has been created from "
                                  f"one of the ChildDataPipes of {describe(dp.main_datapipe)}." + _FEEDBACK)
    elif dp._valid_iterator_id != iterator_id:
        raise InvalidIterator("This iterator has been invalidated because another iterator has been created from the "
                              f"same IterDataPipe: {describe(dp)}\nThis may be caused multiple references to the "
                              "same IterDataPipe. We recommend using `.fork()` if that is necessary." + _FEEDBACK)


def _annotate(exc, dp):
    if isinstance(exc, InvalidIterator) or getattr(exc, "_datapipe_noted", False):
        return
    note = f"\nThis exception is thrown by __iter__ of {describe(dp)}"
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (exc.args[0] + note,) + exc.args[1:]
    else:
        exc.args = (note,)
    try:
        exc._datapipe_noted = True
    except AttributeError:
        pass


class _GuardedIterator:
    """What a non-generator `__iter__` returned, checked against its pipe at every step."""

    def __init__(self, it, dp, iterator_id):
        self.it, self.dp, self.iterator_id = it, dp, iterator_id

    def __iter__(self):
        return self

    def __next__(self):
        _check_valid(self.dp, self.iterator_id)
        item = next(self.it)
        self.dp._number_of_samples_yielded += 1
        return item

    def __getattr__(self, name):
        return getattr(self.__dict__["it"], name)


def guard_iter(fn):
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def guarded_generator(self, *args, **kwargs):
            inner = fn(self, *args, **kwargs)
            # As the wrapper is itself a generator, the id is taken (and the pipe reset) at the
            # first next(), not at iter(): the same moment torch does it.
            iterator_id = _new_iterator_id(self)
            try:
                item = inner.send(None)
                while True:
                    self._number_of_samples_yielded += 1
                    sent = yield item
                    _check_valid(self, iterator_id)
                    item = inner.send(sent)
            except StopIteration:
                return
            except Exception as exc:
                _annotate(exc, self)
                raise
            finally:
                inner.close()
        return guarded_generator

    @functools.wraps(fn)
    def guarded(self, *args, **kwargs):
        it = fn(self, *args, **kwargs)
        iterator_id = _new_iterator_id(self)
        return _GuardedIterator(it, self, iterator_id)
    return guarded

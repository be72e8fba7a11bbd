"""The exceptions of the library (raised by the compiled module).

Every error of a call that the library itself reports is a
:class:`MemPursuitError` (a ``ValueError``): its message names the
argument, the row and the element (``candidate 3: element 7 is not finite
(NaN)``) or the option (``gamma 2 must be in (0, 1]``), and its ``kind`` says
what to change, the same word as in the Rust crate and the JavaScript
package:

* ``"input"``: the data (a shape, a non-finite value, a zero or
  out-of-range norm, the relevance vector, a value the storage cannot hold);
* ``"option"``: a keyword argument (an unknown option or method, a value of
  the wrong type or out of its range, an option that does not apply to the
  method), the budget ``k`` or ``threads``;
* ``"capacity"``: the memory a call needs (its scratch for P and K, or a
  conversion) cannot be allocated or addressed. These are a
  :class:`CapacityError`, which is also a ``MemoryError``.

An argument of the wrong Python type (``k=2.5``, ``gamma=[1]``, a complex or
string array) is a plain ``TypeError`` naming the argument.
"""

from typing import Any, Literal, Optional, Tuple, Type

__all__ = ["CapacityError", "MemPursuitError"]


class MemPursuitError(ValueError):
    """An error the library reports, with ``kind`` ``"input"``, ``"option"``
    or ``"capacity"`` (see the module docs). ``str(error)`` is the message."""

    __module__ = "mempursuit"

    #: ``"input"``, ``"option"`` or ``"capacity"``.
    kind: Literal["input", "option", "capacity"]

    #: The index of the document at fault (the document layer), else ``None``.
    index: Optional[int]
    #: That document's id, when it has one, else ``None``.
    id: Optional[str]
    #: The argument at fault (``"embedding"``, ``"cost"``, ...), else ``None``.
    argument: Optional[str]

    def __init__(
        self,
        message: str,
        kind: Literal["input", "option", "capacity"] = "input",
        index: Optional[int] = None,
        id: Optional[str] = None,
        argument: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.index = index
        self.id = id
        self.argument = argument

    def __reduce__(self) -> Tuple[Type["MemPursuitError"], Tuple[Any, ...]]:
        return (type(self), (str(self), self.kind, self.index, self.id, self.argument))


class CapacityError(MemPursuitError, MemoryError):
    """A :class:`MemPursuitError` of kind ``"capacity"``, also a
    ``MemoryError``: the scratch of a call (about 8·P·min(K, P) bytes), a
    converted copy of an argument, or a ``Selector``'s capacity cannot be
    allocated or exceeds the address space. Use a smaller pool or budget."""

    __module__ = "mempursuit"

    def __init__(
        self,
        message: str,
        kind: Literal["input", "option", "capacity"] = "capacity",
        index: Optional[int] = None,
        id: Optional[str] = None,
        argument: Optional[str] = None,
    ) -> None:
        super().__init__(message, kind, index, id, argument)

"""Streamlit's "filtered" session state, looked up one key at a time instead of rebuilt for every widget.

Every ``st.selectbox``, ``st.radio``, ``st.number_input``, ``st.slider`` (and the text and date widgets) of
Streamlit 1.67 asks ``get_session_state().filtered_state`` whether its own key holds ``None``; that property
builds a new dict of the whole session state each time (every key, each value through its presenter), so a
page with W widgets and K keys pays W x K lookups per run: 8% of the server's script CPU over this app's pages
(py-spy over ``bench/bench_pages.py``; the monthly bill's 34 widgets x ~70 keys), and more the more keys a
session holds (streamlit/streamlit issue #9415 describes the same growth).

:func:`install` makes the property return a :class:`FilteredStateView` instead: a read-only mapping with the
same contents, which answers ``key in view`` and ``view[key]`` for a user's key from that key alone (what the
widgets ask) and builds the full dict, with Streamlit's own code, only when iterated, measured or printed
(``len``, ``str``, iteration, AppTest's ``session_state``; ``st.session_state.to_dict()`` stays a dict). Equivalence, from
``SessionState`` in streamlit/runtime/state/session_state.py (1.67): the full dict holds a user key K when K
or the widget id K maps to is among the state's keys, with the value ``state[K]`` either way, and
``K in state`` (``SessionState.__contains__``: ``state[K]`` does not raise) is true in exactly those cases;
keys the full dict leaves out (widget ids, internal keys) go to the full dict. tests/test_fast_session_state.py
checks the two agree key by key on real sessions of every page.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from streamlit.runtime.state import session_state as _ss
from streamlit.runtime.state.common import is_element_id
from streamlit.runtime.state.safe_session_state import SafeSessionState
from streamlit.runtime.state.session_state_proxy import SessionStateProxy

#: Streamlit's own properties and method, kept for the full dict and for :func:`uninstall`.
ORIGINAL_FILTERED_STATE = SafeSessionState.filtered_state
ORIGINAL_TO_DICT = SessionStateProxy.to_dict


def _is_user_key(key: object) -> bool:
    """A key a user gives a widget or writes into st.session_state (not a widget id, not internal)."""
    return isinstance(key, str) and not is_element_id(key) and not _ss._is_internal_key(key)


class FilteredStateView(Mapping):
    """``SessionState.filtered_state`` as a lazy read-only mapping (see the module's docstring).

    Args:
        safe: the session's ``SafeSessionState`` (its lock is held around every read, as Streamlit's own
            property holds it while building the dict).

    ``key in view`` and ``view[key]`` for a user key read the session state directly; anything else
    (iteration, ``len``, widget ids) uses the dict Streamlit's own property builds, built once per view.

    Raises:
        KeyError: ``view[key]`` for a key the filtered state does not hold.
    """

    __slots__ = ("_safe", "_full")

    def __init__(self, safe: SafeSessionState):
        self._safe = safe
        self._full: dict[str, Any] | None = None

    def _dict(self) -> dict[str, Any]:
        if self._full is None:
            self._full = ORIGINAL_FILTERED_STATE.fget(self._safe)
        return self._full

    def __contains__(self, key: object) -> bool:
        if _is_user_key(key):
            with self._safe._lock:
                return key in self._safe._state
        return key in self._dict()

    def __getitem__(self, key: str) -> Any:
        if _is_user_key(key):
            with self._safe._lock:
                return self._safe._state[key]
        return self._dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __repr__(self) -> str:
        return repr(self._dict())


def _filtered_state(self: SafeSessionState) -> FilteredStateView:
    return FilteredStateView(self)


def _to_dict(self: SessionStateProxy) -> dict[str, Any]:
    """``st.session_state.to_dict()``: a plain dict, as before (the view is a mapping, not a dict)."""
    return dict(ORIGINAL_TO_DICT(self))


def install() -> None:
    """Make ``SafeSessionState.filtered_state`` return a :class:`FilteredStateView` (and keep
    ``st.session_state.to_dict()`` a dict); idempotent, for the whole process."""
    SafeSessionState.filtered_state = property(_filtered_state, doc=ORIGINAL_FILTERED_STATE.__doc__)
    SessionStateProxy.to_dict = _to_dict


def uninstall() -> None:
    """Restore Streamlit's own ``filtered_state`` and ``to_dict`` (for comparisons in tests and benchmarks)."""
    SafeSessionState.filtered_state = ORIGINAL_FILTERED_STATE
    SessionStateProxy.to_dict = ORIGINAL_TO_DICT


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return SafeSessionState.filtered_state is not ORIGINAL_FILTERED_STATE

"""Caches the pages share across sessions, bounded in entries and in bytes.

Streamlit's ``st.cache_data`` bounds a cache by entries (``max_entries``) and age (``ttl``) but not by
size, and one entry can be large (a batching simulation's frames reached 117 MB, 32 of them 985 MB). A
``BoundedCache`` is a least-recently-used map that also keeps the sum of its entries' sizes (their pickled
length, measured once when stored) under ``max_bytes``: storing past either bound evicts the oldest.

``bounded_cache`` memoises a function with one; ``FigureRecipe`` (``charts.Figure()``) records how a
Plotly figure is built and ``build_figure`` builds and styles it once per distinct recipe, so a rerun
with inputs seen before (by any session: a class moves the same sliders through the same few values)
neither rebuilds nor restyles the figure; building a Plotly figure costs far more CPU than sending it.

Values are shared between sessions and threads: callers must treat them as read-only.
"""
from __future__ import annotations

import functools
import hashlib
import pickle
import threading
from collections import OrderedDict
from typing import Any, Callable

MB = 1_000_000


def size_bytes(value: Any) -> int:
    """The size an entry is charged: its pickled length in bytes (a Plotly figure pickles as its JSON dict)."""
    try:
        return len(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # noqa: BLE001 - an unpicklable value is charged a nominal size, never refused
        return 1_000


class BoundedCache:
    """A thread-safe LRU map bounded in entries and in bytes.

    Args:
        max_entries: most entries kept (>= 1).
        max_bytes: most bytes kept, summed over entries' ``size_bytes`` (> 0). A single value larger than
            ``max_bytes`` is returned to its caller but not stored.

    Raises:
        ValueError: a bound that is not positive.
    """

    def __init__(self, max_entries: int, max_bytes: int):
        if max_entries < 1 or max_bytes <= 0:
            raise ValueError(f"a cache needs max_entries >= 1 and max_bytes > 0, got {max_entries} and {max_bytes}")
        self.max_entries, self.max_bytes = int(max_entries), int(max_bytes)
        self._data: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)

    @property
    def total_bytes(self) -> int:
        """Bytes held now (sum of the entries' sizes)."""
        return self._bytes

    def get(self, key: Any, default: Any = None) -> Any:
        """The value stored under ``key`` (marked most recently used), or ``default``."""
        with self._lock:
            item = self._data.get(key)
            if item is None:
                self.misses += 1
                return default
            self._data.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: Any, value: Any, size: int | None = None) -> None:
        """Store ``value`` (of ``size`` bytes; measured when None), evicting the least recently used entries."""
        size = size_bytes(value) if size is None else int(size)
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size > self.max_bytes:
                return
            self._data[key] = (value, size)
            self._bytes += size
            while len(self._data) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, s) = self._data.popitem(last=False)
                self._bytes -= s

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._data.clear()
            self._bytes = 0


def _key(args: tuple, kwargs: dict) -> bytes:
    # Arguments are small (ids, numbers, frozen dataclasses, small frames): their pickle identifies them.
    return hashlib.blake2b(pickle.dumps((args, sorted(kwargs.items())), protocol=pickle.HIGHEST_PROTOCOL),
                           digest_size=16).digest()


#: The cache of each function memoised by ``bounded_cache`` or ``cached_call``, by (file, qualified name).
_CACHES: dict[tuple[str, str], BoundedCache] = {}
_CACHES_LOCK = threading.Lock()
_MISSING = object()


def _cache_of(func: Callable, max_entries: int, max_bytes: int) -> BoundedCache:
    """The process-wide cache of ``func``, kept by its file and qualified name (a new one if the bounds changed)."""
    code = getattr(func, "__code__", None)
    where = (code.co_filename if code else getattr(func, "__module__", ""), getattr(func, "__qualname__", repr(func)))
    with _CACHES_LOCK:
        cache = _CACHES.get(where)
        if cache is None or (cache.max_entries, cache.max_bytes) != (int(max_entries), int(max_bytes)):
            cache = _CACHES[where] = BoundedCache(max_entries, max_bytes)
    return cache


def _call_through(cache: BoundedCache, func: Callable, args: tuple, kwargs: dict):
    """``func(*args, **kwargs)`` from ``cache`` when stored, else computed and stored (exceptions are not)."""
    key = _key(args, kwargs)
    value = cache.get(key, _MISSING)
    if value is _MISSING:
        value = func(*args, **kwargs)
        cache.put(key, value)
    return value


def bounded_cache(max_entries: int = 32, max_bytes: int = 64 * MB) -> Callable:
    """Decorator: memoise a function on its (picklable) arguments in a ``BoundedCache``.

    The wrapper exposes the cache as ``.cache``. Exceptions are not cached.

    Streamlit executes a page file anew on every run, so a function decorated in a page is defined anew
    each time: the caches are kept by the function's file and qualified name (``_CACHES``), and every
    definition of the same function shares one cache, which lives as long as the process.
    """
    def wrap(func: Callable) -> Callable:
        cache = _cache_of(func, max_entries, max_bytes)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return _call_through(cache, func, args, kwargs)
        wrapper.cache = cache
        return wrapper
    return wrap


def cached_call(func: Callable, *args, **kwargs):
    """``func(*args, **kwargs)``, memoised across sessions and reruns on its (picklable) arguments.

    For a page's calls into calc that cost milliseconds (a sweep, an operator split, a batch search): a page
    script runs afresh on every rerun, so a cache it made itself would not outlive the run; this one lives
    here, one ``BoundedCache`` (64 entries, 32 MB) per function. The value is shared: treat it as read-only
    (``df.assign`` makes a copy; ``df[col] = ...`` would change every session's copy). Exceptions are not
    cached.
    """
    return _call_through(_cache_of(func, 64, 32 * MB), func, args, kwargs)


class FigureRecipe:
    """A Plotly figure written down as the calls that build it; ``build_figure`` builds it once per recipe.

    Used like ``go.Figure``: ``fig = FigureRecipe(); fig.add_scatter(...); fig.update_layout(...)``; every
    method call is recorded (and returns the recipe, so calls chain), nothing is built. Two recipes with
    the same calls and arguments are the same figure, so the built and styled figure is cached on the
    recipe: a rerun with inputs seen before (by any session) skips Plotly's costly figure construction.
    Reading a built figure's attributes (``fig.layout``, ``fig.data``) is not supported on a recipe.
    """

    def __init__(self, *args, **kwargs):
        self._calls: list[tuple[str, tuple, dict]] = [("__init__", args, kwargs)]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)

        def record(*args, **kwargs):
            self._calls.append((name, args, kwargs))
            return self
        return record

    def build(self):
        """The figure the recorded calls make (a ``FrozenFigure``, unstyled, not cached).

        ``FigureRecipe(subplots=dict(rows=1, cols=3, ...))`` starts from ``plotly.subplots.make_subplots``
        with those arguments: several panels in one figure, drawn by the browser as one chart.
        """
        _, args, kwargs = self._calls[0]
        if "subplots" in kwargs:
            from plotly.subplots import make_subplots

            kwargs = dict(kwargs)
            fig = frozen_figure_class()(make_subplots(**kwargs.pop("subplots")), *args, **kwargs)
        else:
            fig = frozen_figure_class()(*args, **kwargs)
        for name, a, k in self._calls[1:]:
            getattr(fig, name)(*a, **k)
        return fig

    @property
    def calls(self) -> list[tuple[str, tuple, dict]]:
        """The recorded calls, in order: (method name, args, kwargs); the first is ``("__init__", ...)``."""
        return self._calls

    def key(self) -> bytes | None:
        """A digest of the recorded calls, or None when an argument cannot be pickled (then never cached)."""
        try:
            return hashlib.blake2b(pickle.dumps(self._calls, protocol=pickle.HIGHEST_PROTOCOL), digest_size=16).digest()
        except Exception:  # noqa: BLE001 - e.g. a lambda passed to for_each_trace
            return None


_FROZEN = None


def frozen_figure_class():
    """``FrozenFigure``: a go.Figure whose ``to_dict()`` is computed once and then returned as is.

    ``st.plotly_chart`` calls ``to_dict()`` on every run, which deep-copies the figure and converts its
    arrays (a third of a page's server time on the roofline page); a figure from ``FIGURES`` never
    changes after it is styled, so its dict is kept with it. Mutating such a figure after its first
    ``to_dict()`` is not supported: copy it first (``go.Figure(fig)``), as presenter mode does.
    (Built on first use: plotly is imported lazily.)
    """
    global _FROZEN
    if _FROZEN is None:
        import plotly.graph_objects as go

        class FrozenFigure(go.Figure):
            __doc__ = frozen_figure_class.__doc__

            def to_dict(self):
                d = self.__dict__.get("_frozen_dict")
                if d is None:
                    d = super().to_dict()
                    self._frozen_dict = d
                return d

            def __reduce__(self):  # pickles (size_bytes) as a plain figure
                import plotly.graph_objects as go_
                return go_.Figure, (super().to_dict(),)

        _FROZEN = FrozenFigure
    return _FROZEN


#: Built and styled figures of every page, shared by all sessions (figures are 5-200 kB each).
FIGURES = BoundedCache(max_entries=256, max_bytes=48 * MB)


#: The JSON text and height (px) of every recipe drawn by ``inplace_chart.recipe_json``, by recipe and config:
#: what a rerun sends, kept as text (a figure object holds several times its JSON's size in memory, and
#: an entry's size is then its length exactly).
FIGURE_JSON = BoundedCache(max_entries=512, max_bytes=32 * MB)


def build_figure(recipe: FigureRecipe):
    """The styled go.Figure of ``recipe`` (``figure_style.style_figure``), from ``FIGURES`` when built before."""
    from ui.figure_style import style_figure

    key = recipe.key()
    fig = FIGURES.get(key) if key is not None else None
    if fig is None:
        fig = style_figure(recipe.build())
        if key is not None:
            FIGURES.put(key, fig)
    return fig


def clear_all() -> int:
    """Empty every cache of this module (the memoised functions', ``FIGURES``, ``FIGURE_JSON``); returns the bytes they held.

    For a process that has been idle for minutes (a class left): what it cached is dropped, so its memory
    returns toward where it started; the next visitors compute again and refill them.
    """
    with _CACHES_LOCK:
        caches = list(_CACHES.values()) + [FIGURES, FIGURE_JSON]
    held = sum(c.total_bytes for c in caches)
    for c in caches:
        c.clear()
    return held

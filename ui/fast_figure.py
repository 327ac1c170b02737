"""A ``FigureRecipe``'s figure as a plain dict, without Plotly's object tree: the same dict at a fraction of the CPU.

Why: building a ``go.Figure`` walks Plotly's property objects on every assignment (path parsing, validator
look-ups, child objects, copies); on a class server that was ~10-40 ms of CPU per figure, most of a
slider move's cost. This module applies the recorded calls to nested dicts and runs only Plotly's own
leaf validators (``plotly.validator_cache.ValidatorCache``: the same ``validate_coerce`` a ``go.Figure``
runs, so values are coerced and invalid ones refused as there), then applies the house style
(``figure_style``'s rules, on the dict) and Plotly's typed-array encoding (``convert_to_base64``, as
``go.Figure.to_dict`` does). The result equals ``style_figure(recipe.build()).to_dict()``
(tests/test_fast_figure.py checks every page's figures).

Supported calls: ``FigureRecipe()`` with traces and a layout dict or ``subplots=`` (x-y panels, built by
``make_subplots`` once per grid), ``add_<trace type>(**props)`` and ``add_trace(trace)`` (one panel's row and
col allowed), ``update_layout``, ``update_xaxes`` / ``update_yaxes`` / ``update_annotations`` (row and col
allowed, no selector), ``add_shape``, ``add_annotation`` (no row or col), ``add_vline`` / ``add_hline``
(annotation_* included; on one panel with subplots). Anything else (secondary y axes, a selector, a line
over several panels, ...) raises ``Unsupported`` and the caller builds the figure with Plotly.
No streamlit here.
"""
from __future__ import annotations

import copy
import functools
import re

import numpy as np
import pandas as pd
from _plotly_utils.basevalidators import CompoundArrayValidator, CompoundValidator, TitleValidator
from _plotly_utils.utils import convert_to_base64
from plotly import shapeannotation
from plotly.basedatatypes import BaseFigure, BaseTraceType
from plotly.validator_cache import ValidatorCache

from ui.figure_style import log_axis_span, log_ticks


class Unsupported(Exception):
    """A call this builder does not reproduce exactly; build the figure with Plotly instead."""


_SUBPLOT_ID = re.compile(r"^(xaxis|yaxis|polar|ternary|scene|geo|mapbox|map|smith|coloraxis|legend)(\d+)$")


@functools.lru_cache(maxsize=4096)
def _key_path(key: str) -> tuple:
    """Plotly's split of a property name into its path ("line_dash" -> ("line", "dash"); "error_y" stays)."""
    path = BaseFigure._str_to_dict_path(key)
    if not path or any(not isinstance(p, str) for p in path):
        raise Unsupported(key)
    return path


@functools.lru_cache(maxsize=4096)
def _validator(parent: str, prop: str):
    """The validator of ``prop`` under the object whose Plotly path is ``parent`` ("scatter", "layout.xaxis")."""
    if parent == "layout":
        m = _SUBPLOT_ID.match(prop)
        if m:
            prop = m.group(1)
    try:
        return ValidatorCache.get_validator(parent, prop)
    except Exception as e:  # noqa: BLE001 - an unknown property: let Plotly raise its own error
        raise Unsupported(f"{parent}.{prop}") from e


def _set(target: dict, parent: str, key: str, value, update: bool) -> None:
    """Set property ``key`` (magic underscores allowed) of the object ``target`` (Plotly path ``parent``).

    ``update``: Plotly's ``update`` semantics (None removes, dicts merge) rather than a constructor's (None
    is "not given").
    """
    path = _key_path(key)
    for p in path[:-1]:
        v = _validator(parent, p)
        if not isinstance(v, CompoundValidator):
            raise Unsupported(key)
        if value is None and p not in target:
            if update:
                raise Unsupported(key)  # Plotly would create an empty parent object
            return
        target = target.setdefault(p, {})
        parent = v.data_class._path_str
    last = path[-1]
    v = _validator(parent, last)
    if value is None:
        if update:
            if isinstance(v, (CompoundValidator, CompoundArrayValidator)):
                raise Unsupported(key)  # Plotly leaves an empty object there
            target.pop(last, None)
        return
    if isinstance(v, CompoundValidator):
        if isinstance(v, TitleValidator) and isinstance(value, (str, int, float)):
            value = {"text": value}
        if not isinstance(value, dict):
            raise Unsupported(key)
        sub = target.setdefault(last, {})
        child = v.data_class._path_str
        for k, val in value.items():
            _set(sub, child, k, val, update)
    elif isinstance(v, CompoundArrayValidator):
        if not isinstance(value, (list, tuple)) or (update and target.get(last)):
            raise Unsupported(key)
        child = v.data_class._path_str
        items = []
        for item in value:
            if not isinstance(item, dict):
                raise Unsupported(key)
            d: dict = {}
            for k, val in item.items():
                _set(d, child, k, val, False)
            items.append(d)
        target[last] = items
    else:
        target[last] = v.validate_coerce(value)


def _props(parent: str, props: dict, update: bool = False) -> dict:
    out: dict = {}
    for k, v in props.items():
        _set(out, parent, k, v, update)
    return out


class _DictFigure:
    """The recorded calls applied to {"data": [...], "layout": {...}}."""

    def __init__(self):
        self.data: list[dict] = []
        self.layout: dict = {}
        #: (row, col) -> (trace's axis references, layout's axis keys) of a figure with subplots, else None
        self.grid: dict | None = None

    def _cells(self, row, col) -> list[tuple[int, int]]:
        """The panels ``row`` and ``col`` (ints or None: any) address (``select_xaxes``' choice)."""
        if self.grid is None or any(v is not None and (isinstance(v, bool) or not isinstance(v, int))
                                    for v in (row, col)):
            raise Unsupported("row/col without subplots, or not one panel")
        cells = [rc for rc in self.grid if (row is None or rc[0] == row) and (col is None or rc[1] == col)]
        if not cells:
            raise Unsupported("no such panel")
        return cells

    def _cell(self, kwargs: dict) -> tuple[int, int] | None:
        """The one panel a call's row and col name (both ints), or None for a call that names none."""
        if kwargs.get("secondary_y") is not None:
            raise Unsupported("secondary_y")
        row, col = kwargs.get("row"), kwargs.get("col")
        if row is None and col is None:
            return None
        if row is None or col is None:
            raise Unsupported("row without col")
        cells = self._cells(row, col)
        if len(cells) != 1:
            raise Unsupported("several panels")
        return cells[0]

    def start(self, data=None, layout=None, frames=None, skip_invalid=False, subplots=None, **extra) -> None:
        """``go.Figure(data, layout)``: traces (one, or a list) and a layout dict, as its constructor sets them;
        ``subplots``: ``make_subplots``' arguments (the recipe's own extension), the panels' axes and titles."""
        if frames or skip_invalid or extra:
            raise Unsupported("a figure started with frames or skip_invalid")
        if subplots is not None:
            self.layout, self.grid = _subplot_base(subplots)
        if data is not None:
            for trace in (data if isinstance(data, (list, tuple)) else [data]):
                self.call("add_trace", (trace,), {})
        if layout is not None:
            if not isinstance(layout, dict):
                raise Unsupported("a layout object")
            for k, v in layout.items():
                _set(self.layout, "layout", k, v, False)

    def call(self, name: str, args: tuple, kwargs: dict) -> None:
        if name == "update_layout":
            if len(args) > 1 or kwargs.pop("overwrite", False):
                raise Unsupported(name)
            props = dict(args[0] or {}) if args else {}
            props.update(kwargs)
            for k, v in props.items():
                _set(self.layout, "layout", k, v, True)
        elif name in ("update_xaxes", "update_yaxes"):
            letter = name[7]
            if args or any(kwargs.get(k) is not None for k in ("selector", "secondary_y", "patch")):
                raise Unsupported(name)
            if kwargs.pop("overwrite", False):
                raise Unsupported(name)
            props = {k: v for k, v in kwargs.items() if k not in ("selector", "row", "col", "secondary_y", "patch")}
            if kwargs.get("row") is not None or kwargs.get("col") is not None:
                names = [self.grid[rc][1][0 if letter == "x" else 1] for rc in self._cells(kwargs.get("row"), kwargs.get("col"))]
            else:
                names = [f"{letter}axis"] + [k for k in self.layout if re.fullmatch(fr"{letter}axis\d+", k)]
            for axis in names:
                for k, v in props.items():
                    _set(self.layout, "layout", f"{axis}.{k}", v, True)
        elif name == "update_annotations":
            if args or any(kwargs.get(k) is not None for k in ("selector", "row", "col", "secondary_y", "patch")):
                raise Unsupported(name)
            if kwargs.pop("overwrite", False):
                raise Unsupported(name)
            props = {k: v for k, v in kwargs.items() if k not in ("selector", "row", "col", "secondary_y", "patch")}
            for note in self.layout.get("annotations", []):
                for k, v in props.items():
                    _set(note, "layout.annotation", k, v, True)
        elif name == "add_trace":
            if len(args) != 1:
                raise Unsupported(name)
            cell = self._cell(kwargs)
            trace = args[0]
            if isinstance(trace, BaseTraceType):
                self.data.append(copy.deepcopy(trace.to_plotly_json()))
                if cell is not None:
                    self._place(self.data[-1], cell)
            elif isinstance(trace, dict) and isinstance(trace.get("type"), str):
                t = dict(trace)
                kind = t.pop("type")
                self._add(kind, t, cell)
            else:
                raise Unsupported(name)
        elif name in ("add_shape", "add_annotation"):
            if args or any(kwargs.get(k) is not None for k in ("row", "col", "secondary_y")):
                raise Unsupported(name)
            props = {k: v for k, v in kwargs.items() if k not in ("row", "col", "secondary_y", "exclude_empty_subplots")}
            self._add_layout_object("shapes" if name == "add_shape" else "annotations", props)
        elif name in ("add_vline", "add_hline"):
            self._axis_line(name[4:], args, kwargs)
        elif name.startswith("add_"):
            if args:
                raise Unsupported(name)
            self._add(name[4:], {k: v for k, v in kwargs.items() if k not in ("row", "col", "secondary_y")},
                      self._cell(kwargs))
        else:
            raise Unsupported(name)

    def _add(self, kind: str, props: dict, cell: tuple[int, int] | None = None) -> None:
        try:
            ValidatorCache.get_validator(kind, "type")
        except Exception as e:  # noqa: BLE001
            raise Unsupported(kind) from e
        trace = _props(kind, props)
        trace["type"] = kind
        if cell is not None:
            self._place(trace, cell)
        self.data.append(trace)

    def _place(self, trace: dict, cell: tuple[int, int]) -> None:
        """A trace added with row and col: its axes are the panel's (``_set_trace_grid_reference``)."""
        kind = trace["type"]
        for k, v in self.grid[cell][0].items():
            _set(trace, kind, k, v, True)

    def _panel_empty(self, xref: str, yref: str) -> bool:
        """``_subplot_not_empty``'s negation: nothing (trace, shape, annotation, image) on the panel's axes yet."""
        for t in self.data:
            if ((t.get("xaxis") or "x"), (t.get("yaxis") or "y")) == (xref, yref):
                return False
        for where in ("shapes", "annotations", "images"):
            for o in self.layout.get(where, []):
                if ((o.get("xref") or "x"), (o.get("yref") or "y")) == (xref, yref):
                    return False
        return True

    def _add_on_panel(self, where: str, props: dict, cell: tuple[int, int]) -> dict | None:
        """``_add_annotation_like`` for one panel (exclude_empty_subplots=True): None when the panel is empty."""
        xaxis, yaxis = self.grid[cell][1]
        yref_given = props.get("yref")
        if yref_given is None or yref_given == "y" or "paper" in yref_given or "domain" in yref_given:
            xref, yref = xaxis.replace("axis", ""), yaxis.replace("axis", "")
        else:
            xref, yref = xaxis.replace("axis", ""), yref_given
        if self._panel_empty(xref, yref):
            return None
        if "domain" in (props.get("xref") or ""):
            xref += " domain"
        if "domain" in (props.get("yref") or ""):
            yref += " domain"
        return self._add_layout_object(where, {**props, "xref": xref, "yref": yref})

    def _add_layout_object(self, where: str, props: dict) -> dict:
        item = _props("layout.shape" if where == "shapes" else "layout.annotation", props)
        self.layout.setdefault(where, []).append(item)
        return item

    def _axis_line(self, kind: str, args: tuple, kwargs: dict) -> None:
        # plotly.basedatatypes.BaseFigure.add_vline / add_hline and _process_multiple_axis_spanning_shapes,
        # for a figure without subplots (row and col "all" or None address the one plot)
        kwargs = dict(kwargs)
        pos = args[0] if args else kwargs.pop("x" if kind == "vline" else "y")
        row, col = kwargs.pop("row", "all"), kwargs.pop("col", "all")
        if len(args) > 1 or kwargs.pop("exclude_empty_subplots", True) is not True:
            raise Unsupported(kind)
        if self.grid is not None:
            if row in ("all", None) or col in ("all", None):
                raise Unsupported(f"{kind} over several panels")
            self._axis_line_on_panel(kind, pos, self._cell(dict(row=row, col=col)), kwargs)
            return
        if row not in ("all", None) or col not in ("all", None):
            raise Unsupported(kind)
        shape_args, shape_kwargs, augmented = _spanning_line(kind, pos, kwargs)
        shape = self._add_layout_object("shapes", {**shape_args, **shape_kwargs})
        added = [shape]
        if augmented is not None:
            if not isinstance(augmented, dict):
                raise Unsupported(kind)
            note = self._add_layout_object("annotations", {**augmented, "yref": shape_kwargs.get("yref", "y")})
            added.append(note)
        ref = "yref" if kind == "vline" else "xref"
        for obj in added:
            obj.setdefault("xref", "x")
            obj.setdefault("yref", "y")
            obj[ref] = obj[ref] + " domain"


    def _axis_line_on_panel(self, kind: str, pos, cell: tuple[int, int], kwargs: dict) -> None:
        # _process_multiple_axis_spanning_shapes with one panel's row and col: add_shape and add_annotation on
        # that panel (skipped while it is empty), then " domain" on the spanning axis' reference
        shape_args, shape_kwargs, augmented = _spanning_line(kind, pos, kwargs)
        added = [self._add_on_panel("shapes", {**shape_args, **shape_kwargs}, cell)]
        if augmented is not None:
            if not isinstance(augmented, dict):
                raise Unsupported(kind)
            added.append(self._add_on_panel("annotations", {**augmented, "yref": shape_kwargs.get("yref", "y")}, cell))
        ref = "yref" if kind == "vline" else "xref"
        for obj in added:
            if obj is not None:
                obj[ref] = obj[ref] + " domain"


def _spanning_line(kind: str, pos, kwargs: dict) -> tuple[dict, dict, object]:
    """An add_vline / add_hline call's line, its own keyword arguments and its annotation (or None), split
    as Plotly's ``_process_multiple_axis_spanning_shapes`` splits them (``plotly.shapeannotation``)."""
    annotation = kwargs.pop("annotation", None)
    if kind == "vline":
        shape_args = dict(type="line", x0=pos, x1=pos, y0=0, y1=1)
    else:
        shape_args = dict(type="line", x0=0, x1=1, y0=pos, y1=pos)
    shape_kwargs, annotation_kwargs = shapeannotation.split_dict_by_key_prefix(kwargs, "annotation_")
    augmented = shapeannotation.axis_spanning_shape_annotation(annotation, kind, shape_args, annotation_kwargs)
    return shape_args, shape_kwargs, augmented


@functools.lru_cache(maxsize=64)
def _subplot_base_cached(args_key: bytes) -> tuple[dict, dict]:
    import pickle

    from plotly.subplots import make_subplots

    fig = make_subplots(**pickle.loads(args_key))
    layout = fig.to_dict()["layout"]
    layout.pop("template", None)
    grid = {}
    for r, row in enumerate(fig._grid_ref, start=1):
        for c, refs in enumerate(row, start=1):
            if refs is None:
                continue
            if len(refs) != 1 or refs[0].subplot_type != "xy":
                raise Unsupported("a panel that is not one x-y plot")
            grid[(r, c)] = (dict(refs[0].trace_kwargs), tuple(refs[0].layout_keys))
    return layout, grid


def _subplot_base(subplots: dict) -> tuple[dict, dict]:
    """``make_subplots(**subplots)``'s layout (without the template) and its panels, built with Plotly once per
    grid: the titles are put in afterwards (their annotations' places do not depend on their text)."""
    import pickle

    args = dict(subplots)
    titles = args.get("subplot_titles")
    if titles is not None:
        if not isinstance(titles, (list, tuple)) or not all(isinstance(t, str) and t for t in titles):
            raise Unsupported("subplot titles that are not all text")
        args["subplot_titles"] = tuple(f"\x00title{i}\x00" for i in range(len(titles)))
    try:
        layout, grid = _subplot_base_cached(pickle.dumps(args, protocol=pickle.HIGHEST_PROTOCOL))
    except Unsupported:
        raise
    except Exception as e:  # noqa: BLE001 - let make_subplots raise its own error
        raise Unsupported("make_subplots refused its arguments") from e
    layout = copy.deepcopy(layout)
    if titles is not None:
        by_text = {f"\x00title{i}\x00": t for i, t in enumerate(titles)}
        for note in layout.get("annotations", []):
            if note.get("text") in by_text:
                note["text"] = by_text[note["text"]]
    return layout, grid


def _label_log_axes(data: list[dict], layout: dict) -> None:
    """``figure_style._label_log_axes`` on a figure dict (before typed-array encoding)."""
    names = [k for k in layout if re.fullmatch(r"[xy]axis\d*", k)] or ["xaxis", "yaxis"]
    for name in names:
        axis = layout.get(name) or {}
        if axis.get("type") != "log" or axis.get("tickvals") is not None:
            continue
        ref, letter = name.replace("axis", ""), name[0]
        values: list[float] = []
        for trace in data:
            if (trace.get(f"{letter}axis") or letter) != ref:
                continue
            col = trace.get(letter)
            if col is None:
                continue
            arr = pd.to_numeric(pd.Series(np.asarray(col).ravel()), errors="coerce").to_numpy(dtype=float)
            values.extend(arr[np.isfinite(arr) & (arr > 0)].tolist())
        span = log_axis_span(axis.get("range"), values)
        if span is None:
            continue
        vals, text = log_ticks(*span, axis.get("tickprefix") or "", axis.get("ticksuffix") or "")
        for k, v in dict(tickmode="array", tickvals=vals, ticktext=text, tickprefix=None, ticksuffix=None).items():
            _set(layout, "layout", f"{name}.{k}", v, True)


def _style(data: list[dict], layout: dict) -> None:
    """``figure_style.style_figure`` on a figure dict."""
    _label_log_axes(data, layout)
    title = layout.get("title") or {}
    top = max((layout.get("margin") or {}).get("t") or 0, 50 if title.get("text") else 20)
    for k, v in dict(height=layout.get("height") or 420, margin=dict(l=10, r=10, t=top, b=10),
                     font=dict(size=14), hovermode=layout.get("hovermode") or "closest").items():
        _set(layout, "layout", k, v, True)
    if (layout.get("legend") or {}).get("orientation") is None:
        _set(layout, "layout", "legend", dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0), True)


@functools.lru_cache(maxsize=1)
def _template_json() -> dict | None:
    """The default template's dict, as ``go.Figure()`` puts it in every figure's layout (built once)."""
    import plotly.graph_objects as go

    return go.Figure().to_dict()["layout"].get("template")


def styled_figure_dict(calls: list[tuple[str, tuple, dict]]) -> dict:
    """``style_figure(FigureRecipe(calls).build()).to_dict()``, built on dicts (see the module's docstring).

    Raises:
        Unsupported: a call outside the subset above (the caller builds with Plotly).
        ValueError: an invalid property value (Plotly's own validator's message).
    """
    name, args, kwargs = calls[0]
    fig = _DictFigure()
    fig.start(*args, **kwargs)
    for name, args, kwargs in calls[1:]:
        fig.call(name, args, dict(kwargs))
    template = _template_json()
    layout = fig.layout
    if template is not None and "template" not in layout:
        layout = {"template": template, **layout}
    _style(fig.data, layout)
    out = {"data": fig.data, "layout": layout}
    template_obj = layout.get("template")
    if template_obj is template:  # shared and already plain JSON: keep it out of the in-place encoding
        layout.pop("template")
        convert_to_base64(out)
        layout["template"] = template
    else:
        convert_to_base64(out)
    return out

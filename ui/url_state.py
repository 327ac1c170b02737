"""The URL as the app's state: parameters no widget can take are dropped before any widget reads them,
values a control refuses and parameters nothing reads are named after the page ran, and a widget's URL value
is matched to its options.

Widgets bind themselves to the URL (``bind="query-params"``); these helpers handle what comes from a
hand-edited or stale link.
"""
from __future__ import annotations

import numpy as np
import streamlit as st

from ui.custom_models import CFG_PARAM, CUSTOM_PREFIX
from ui import number_ranges
from ui.formats import md_escape


#: Longest query parameter value kept (a pasted config.json travels in one on the live page).
MAX_QUERY_VALUE_CHARS = 20_000
#: URL keys whose options are too many to list: a refused value is "not a known model", not dozens of names.
LONG_LISTS = {"model": "a known model", "gpu": "a known GPU"}
#: Link parameters the app reads itself rather than through a URL-bound widget (``bind="query-params"``), with
#: what reads them: ``unread_link_params`` never names them. A new ``st.query_params`` read of a literal key in
#: ui/, app_pages/ or app.py belongs here (tests/test_link_notice.py scans the source for them).
READ_WITHOUT_WIDGET = {
    "present": "presenter mode, present=1 (ui/classroom.py; the class poll's teacher link sets it too)",
    "story": "the lecture's step, story=<n> (ui/classroom.py)",
    CFG_PARAM: "a config.json-loaded model itself, beside model=custom:<name> (ui/custom_models.py, ui/sidebar.py)",
    "model": "read before the sidebar's model box, to rebuild a config.json-loaded model from cfg (ui/sidebar.py)",
    "wq": "read before the sidebar's weights box: a checkpoint name's format applies only where the link sets none "
          "(ui/sidebar.py)",
    "mb_prices": "the monthly bill's edited price cells (ui/bill_views.py: a data editor cannot bind)",
    "kv_layout": "the KV page's attention layout by its id, gqa (ui/kv_layout.py), before its radio reads its label",
    "variant": "the exercises' variant (app_pages/exercises.py)",
    "teacher": "the exercises' teacher view: a class poll's teacher key (app_pages/exercises.py)",
    "code": "the class poll's session code (app_pages/poll.py)",
    "key": "the class poll's teacher key (app_pages/poll.py)",
    "me": "a student's id in the class poll (app_pages/poll.py)",
    "embed": "Streamlit's own: the app shown inside another page",
    "embed_options": "Streamlit's own: how an embedded app shows",
}
#: Streamlit reads its own embed parameters in any letter case.
_STREAMLIT_KEYS = ("embed", "embed_options")
#: Most parameters one notice names; a longer list ends with how many more were ignored.
MAX_NAMED_PARAMS = 20


def sanitize_query_params() -> list[str]:
    """Drop URL parameters no widget can take, before any widget reads the URL (called first by app.py).

    Dropped: values that read as a number but not a finite one ("inf", "-inf", "Infinity", "nan",
    "1e400", a 400-digit integer; Streamlit 1.67 converts an integer input's URL value to int before
    its range check, and these raise), and values longer than ``MAX_QUERY_VALUE_CHARS``. The widget
    then starts from its default.

    A widget seeds itself on its first run from the URL as the session opened (Streamlit keeps that
    copy apart from ``st.query_params``), so the parameter is removed from both.

    Returns:
        ``(name=value, why)`` for each dropped parameter (name and value cut to 40 characters, a longer value
        ending in "…"; why: "not a finite number" or "over 20,000 characters"), for ``dropped_message``.
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    dropped = []
    with get_session_state().query_params() as qp:
        initial = getattr(qp, "_initial_query_params", None)
        initial = initial if isinstance(initial, dict) else {}
        for key in set(qp) | set(initial):
            values = list(qp.get_all(key)) + list(initial.get(key) or [])
            bad = next((str(v) for v in values if _bad_query_value(str(v))), None)
            if bad is not None:
                if key in qp:
                    del qp[key]
                initial.pop(key, None)
                why = (f"over {MAX_QUERY_VALUE_CHARS:,} characters" if len(bad) > MAX_QUERY_VALUE_CHARS
                       else "not a finite number")
                dropped.append((f"{str(key)[:40]}={_cut(bad)}", why))
    return sorted(dropped)


def dropped_message(dropped: list[tuple[str, str]]) -> str:
    """The page's message for the parameters ``sanitize_query_params`` dropped: each ``name=value`` named
    (markdown-escaped) with why, and that the rest of the link holds. "" when none was dropped."""
    if not dropped:
        return ""
    return ("Ignored link parameters: " + ", ".join(f"{md_escape(d)} ({why})" for d, why in dropped)
            + ". Those controls start from their defaults; the rest of the link holds.")


def link_params_at_open() -> dict[str, list[str]] | None:
    """The URL's parameters (after ``sanitize_query_params``) on a session's first run, else None.

    ``report_ignored_link_params`` compares them with what the bound widgets took, after the page ran.
    """
    if st.session_state.get("_link_checked"):
        return None
    st.session_state["_link_checked"] = True
    return {str(k): list(st.query_params.get_all(k)) for k in st.query_params}


def link_reason(key: str, why: str) -> None:
    """Say why the URL-bound widget ``key`` cannot take the value a link gives it, in the page's own words (a row
    the page lists elsewhere, say): ``ignored_link_params`` gives it in place of its generic reason ("not one of its
    N options")."""
    st.session_state.setdefault("_link_why", {})[key] = why


def ignored_link_params(opened: dict[str, list[str]] | None) -> list[str]:
    """``name=value (why)`` for each parameter of the opening link that a URL-bound widget refused (the value is
    not one of a select widget's options, not a number for a number widget, or outside a slider's or number
    input's range; the page's own reason where it gave one, ``link_reason``): Streamlit then starts the
    widget from its default and drops the parameter, silently. A value equal to the default is dropped
    too, and is not reported; parameters no widget reads are ``unread_link_params``'. The sidebar's model and GPU
    say "not a known model" and "not a known GPU" (``LONG_LISTS``) rather than list every preset; a
    config.json-loaded model ("custom:<name>") that this browser session does not hold says so.

    Uses the widgets' registration metadata (Streamlit 1.67's session state: ``formatted_options``,
    ``value_type``, the deserializer), the checks Streamlit's ``_seed_widget_from_url`` applies.
    """
    if not opened:
        return []
    from streamlit.runtime.state.query_params import parse_url_param

    refused = []
    named_late = st.session_state.get("_late_link_named", set())
    for key, values in opened.items():
        if key in st.query_params or not values or key in named_late:
            continue  # kept (taken as given, or corrected) by its widget, read by no widget, or named by the page
        values = [st.session_state.get("_url_rewrites", {}).get(key, values[-1])]  # accept_url_values' form
        meta = _bound_widget(key)
        if meta is None:
            continue
        why = ""
        try:
            parsed = parse_url_param(values[0], meta.value_type)
            meta.deserializer(parsed)
            options = meta.formatted_options  # radio, selectbox; a select slider keeps its labels in its serde
            if options is None:
                labels = getattr(getattr(meta.deserializer, "__self__", None), "formatted_option_to_index", None)
                options = list(labels) if isinstance(labels, dict) else None
            ok = options is None or (
                all(v in options for v in parsed) if isinstance(parsed, list) else
                not isinstance(parsed, str) or parsed in options)
            if not ok:
                shown = [str(o) for o in options]
                why = (f"not {shown[0]}, the only option" if len(shown) == 1 else
                       "not one of " + ", ".join(shown) if len(shown) <= 8 and sum(map(len, shown)) <= 80
                       else f"not one of its {len(shown)} options, {shown[0]} to {shown[-1]}")
                if key in LONG_LISTS:
                    why = ("a model loaded from a config.json in another browser session"
                           if key == "model" and str(values[0]).startswith(CUSTOM_PREFIX)
                           else f"not {LONG_LISTS[key]}")
            serde = getattr(meta.deserializer, "__self__", None)  # a slider's or number input's range
            lo, hi = getattr(serde, "min_value", None), getattr(serde, "max_value", None)
            numbers = [v for v in (parsed if isinstance(parsed, list) else [parsed])
                       if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if ok and isinstance(lo, (int, float)) and isinstance(hi, (int, float)):
                ok = all(lo <= v <= hi for v in numbers)
                why = "" if ok else _range_why(lo, hi)
        except Exception:  # noqa: BLE001 - a value the widget cannot parse is a refused value
            ok = False
            why = "not a number" if meta.value_type in ("double_value", "int_value", "double_array_value",
                                                        "int_array_value") else "not a value it takes"
        if not ok:
            why = st.session_state.get("_link_why", {}).get(key) or why  # the page's own words (``link_reason``)
            refused.append(f"{key[:40]}={md_escape(_cut(values[-1]))}" + (f" ({md_escape(why)})" if why else ""))
    return refused


def rounded_link_params(opened: dict[str, list[str]] | None) -> list[str]:
    """``name=value (read as N)`` for each parameter of the opening link that a whole-number control (a URL-bound
    ``st.number_input`` of ints) took only after cutting off its fraction: Streamlit reads "1.5" as 1 (the
    widget's value) and the browser rewrites the URL to it, silently. Name and value cut to 40 characters and
    markdown-escaped; [] without a link."""
    if not opened:
        return []
    rounded = []
    for key, values in opened.items():
        if not values:
            continue
        meta = _bound_widget(key)
        raw = str(values[-1]).strip()
        now = st.session_state.get(key) if meta is not None else None
        if not isinstance(now, int) or isinstance(now, bool):  # an int number input (its URL type is double_value)
            continue
        now = str(now)
        try:
            whole = float(raw).is_integer()
        except ValueError:
            continue
        if not whole:
            rounded.append(f"{md_escape(_cut(key))}={md_escape(_cut(raw))} (read as {md_escape(_cut(now))})")
    return rounded


def unread_link_params(opened: dict[str, list[str]] | None) -> list[str]:
    """``name=value`` for each parameter of the opening link that nothing in this run reads: neither the key of a
    widget bound to the URL (``bind="query-params"``) that registered in this run (the sidebar's and the page's:
    call it after the page ran), nor one of ``READ_WITHOUT_WIDGET``. Name and value are cut to 40 characters
    (a longer one ending in "…") and markdown-escaped; the last value of a repeated parameter is named.

    A widget the page does not draw now (the monthly bill's requests-a-day box in the product's-users mode, a
    control of another page) counts as unread, unless the page said it draws it later in the session
    (``reads_later``: the endpoint section's layout boxes, drawn once results are in, name their refused values
    then). A link the app writes cannot carry such a key: Streamlit removes a bound widget's parameter from the
    URL in the run that does not draw the widget, and a page switch drops the parameters of the previous page's
    widgets, so the app's own links hold only the parameters of widgets drawn when they were copied, which a
    fresh session opened on them draws again.

    Nothing is removed: the parameters stay in the URL (``st.query_params``), as the link had them.

    Args:
        opened: ``link_params_at_open()``'s parameters; None (not the session's first run) or empty: nothing.

    Returns:
        The ``name=value`` texts in the link's order, at most ``MAX_NAMED_PARAMS`` of them, then, when there
        were more, "and N more".

    Raises:
        Nothing of its own; outside a script run Streamlit's session state has no widgets and every parameter
        not in ``READ_WITHOUT_WIDGET`` is named.
    """
    if not opened:
        return []
    later = st.session_state.get(_READ_LATER, set())
    unread = [f"{md_escape(_cut(key))}={md_escape(_cut(values[-1] if values else ''))}"
              for key, values in opened.items()
              if key not in READ_WITHOUT_WIDGET and key.lower() not in _STREAMLIT_KEYS and _bound_widget(key) is None
              and key not in later]
    if len(unread) > MAX_NAMED_PARAMS:
        unread = unread[:MAX_NAMED_PARAMS] + [f"and {len(unread) - MAX_NAMED_PARAMS:,} more"]
    return unread


#: Session-state key of the URL keys a page draws only later in the session (``reads_later``).
_READ_LATER = "_link_read_later"


def reads_later(keys) -> None:
    """Say that this page draws the URL-bound widgets ``keys`` only later in the session (the endpoint section's
    tp, pp, ep, engine, lengths and level, once a result is in), so that ``unread_link_params`` does not call a
    link's value for them ignored now; ``late_links_notice`` names their refused values when they are drawn."""
    st.session_state.setdefault(_READ_LATER, set()).update(keys)


def link_notice(refused: list[str], unread: list[str], rounded: list[str] | None = None) -> str:
    """The page's one message about the opening link: the values its controls refused (``ignored_link_params``),
    then the parameters no control reads (``unread_link_params``), then the fractions a whole-number control
    dropped (``rounded_link_params``), each a sentence; "" when none has any."""
    parts = []
    if refused:
        parts.append("Link values that no control on this page accepts were ignored, and those controls start "
                     "from their defaults: " + ", ".join(refused) + ".")
    if unread:
        parts.append("Link parameters that no control shown on this page reads were ignored: "
                     + ", ".join(unread) + ".")
    if rounded:
        parts.append("Link values that a whole-number control cut to a whole number: " + ", ".join(rounded) + ".")
    return " ".join(parts)


def link_values(key: str) -> list[str]:
    """The URL's values for ``key`` now, read just before its widget is drawn, for ``late_link_notice``."""
    return [str(v) for v in st.query_params.get_all(key)]


def late_link_notice(key: str, values: list[str]) -> str:
    """``link_notice``'s text for a URL-bound widget drawn only in a later run than the session's first (the
    endpoint section's level radio, drawn once a result file is read): app.py's check of the opening link ran
    before the widget existed, so a value it refused would vanish unnamed. ``values``: ``link_values(key)``,
    read before the widget was drawn; call after it. "" when it took them, or there were none.
    """
    return late_links_notice({key: values})


def late_links_notice(linked: dict[str, list[str]]) -> str:
    """``late_link_notice`` for several widgets at once ({key: ``link_values(key)``}), in one notice; the keys it
    names are left out of app.py's notice after the page."""
    linked = {k: v for k, v in linked.items() if v}
    text = link_notice(ignored_link_params(linked), []) if linked else ""
    if text:  # named here: app.py's notice after the page leaves them out
        st.session_state.setdefault("_late_link_named", set()).update(linked)
    return text


def _bound_widget(key: str):
    """The registration metadata of the widget keyed ``key`` if it is bound to the URL (``bind="query-params"``)
    and has registered (on a session's first run: in this run, so far), else None. Streamlit keeps a widget's
    latest metadata under the id its key last mapped to."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    state = get_session_state()._state
    widget_id = state._key_id_mapper.get_id_from_key(key, None)
    meta = state._new_widget_state.widget_metadata.get(widget_id) if widget_id else None
    return meta if meta is not None and getattr(meta, "bind", None) == "query-params" else None


#: Streamlit's own ends of a number input given no min or max (float: +-1.79769e308; int: +-(2^53 - 1), the
#: browser's safe integers): past these a range has no end to name.
_NO_END = 2 ** 53 - 1


def _range_why(lo: float, hi: float) -> str:
    """Why a linked number is refused by a widget's range ``lo`` to ``hi``: "outside 1 to 100"; for a range
    open at one end (Streamlit's default end of +-1.79769e308 or +-(2^53 - 1)), "below 0, the least it accepts"
    or "above 10, the most it accepts". Ends written as the range captions write them
    (``number_ranges.bound_text``: "10,000,000", not "1e+07")."""
    num = number_ranges.bound_text
    if hi >= _NO_END > lo:
        return f"below {num(lo)}, the least it accepts"
    if lo <= -_NO_END < hi:
        return f"above {num(hi)}, the most it accepts"
    return f"outside {num(lo)} to {num(hi)}"


def same_option(value, options, same=None):
    """The first of ``options`` that ``same`` (a function of a value giving the choice it stands for) finds equal to
    ``value``; None without ``same``, for no value, or where none is (``keep_valid``, ``accept_url_values``)."""
    if same is None or value is None:
        return None
    want = same(value)
    return next((o for o in options if same(o) == want), None)


def accept_url_values(key: str, options, format_func=str, same=None) -> None:
    """Let a link name an option of the URL-bound widget ``key`` by its plain value as well as by its label.

    A bound select slider, selectbox or radio reads its URL parameter as the label it shows (``format_func``
    applied: "16K" for 16384, "16.0" for 16.0, "MHA" for "mha") and silently drops anything else, so
    ``/kv_cache?kv_ctx=16384`` opened on the default. Called just before the widget: a value that names an
    option as a plain number equal to it ("16384", "16", "1.6e4"), or as the option itself ("mha") or its label
    in any letter case ("MHA", "TRTLLM", "tensorrt-llm"), is rewritten to that option's label, the one form the
    app writes. ``same`` (as ``keep_valid`` takes it): a value whose ``same`` equals an option's names that option
    (a configuration's label written with another row count, by a link made while a file was loaded).
    Anything else is left for the widget (which ignores it).
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    labels = [str(format_func(o)) for o in options]

    def label_of(value: str) -> str | None:
        if value in labels:
            return None
        for option, label in zip(options, labels):
            if value.casefold() in (str(option).casefold(), label.casefold()):
                return label
        match = same_option(value, options, same)
        if match is not None:
            return str(format_func(match))
        try:
            number = float(value.replace(",", "").replace("_", ""))
        except ValueError:
            return None
        for option, label in zip(options, labels):
            if isinstance(option, (int, float, np.integer, np.floating)) and not isinstance(option, bool) \
                    and float(option) == number:
                return label
        return None

    with get_session_state().query_params() as qp:
        if key in qp and not qp.is_bound(key):  # a bound widget's value is its own (keep_valid mends it)
            label = label_of(str(qp[key]))
            if label is not None:
                qp[key] = label
                st.session_state.setdefault("_url_rewrites", {})[key] = label  # taken (ignored_link_params)
        initial = getattr(qp, "_initial_query_params", None)
        if isinstance(initial, dict) and initial.get(key):
            values = [label_of(str(v)) or str(v) for v in initial[key]]
            initial[key] = values


def set_over_link(key: str, value: str) -> None:
    """Before the URL-bound widget ``key`` (one whose value is its label: a selectbox of strings) is drawn, set it to
    ``value`` over what the opening link says for it: a widget seeds itself from the link on its first run, over a
    value set before it, so the link's value is rewritten too (its URL parameter, where the widget has not bound it
    yet, and the copy Streamlit seeds from). ``ignored_link_params`` then takes it as a value the widget took. Where
    the link does not name ``key``, the value is written into it (Streamlit writes a widget's value into the link
    only once it changes), so that the link shows, and reopens, what the page opened on."""
    from streamlit.runtime.state.session_state_proxy import get_session_state

    st.session_state[key] = value
    with get_session_state().query_params() as qp:
        initial = getattr(qp, "_initial_query_params", None)
        if isinstance(initial, dict) and initial.get(key):
            initial[key] = [value]
        if key in qp and not qp.is_bound(key) and qp[key] != value:
            qp[key] = value
            st.session_state.setdefault("_url_rewrites", {})[key] = value
        elif key not in qp:
            qp[key] = value


def seed_unnamed(key: str, value: str) -> bool:
    """Before the URL-bound widget ``key`` is drawn, in a run whose URL does not name ``key``: open the widget on
    ``value`` as if the URL named it. The value goes into the copy of the URL Streamlit seeds widgets from, so that
    it holds on a session's first run and on the browser's Back or Forward to this URL (where a bound widget the URL
    does not name returns to its default, over any value set before it), and into the app's copy of the link without
    a message of its own: the browser gets it with the next change the app makes to the link in this run
    (``accept_url_values``' rewrite of another parameter), so that the two make one entry of the browser's history,
    not two (each change the app makes to the link outside Back and Forward pushes one). In a later run on the same
    URL the widget keeps its own value (a choice made since).

    Returns:
        True where the URL did not name ``key`` and ``value`` was seeded; False where it names it (its value holds).
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    with get_session_state().query_params() as qp:
        if key in qp:
            return False
        qp.set_with_no_forward_msg(key, value)
        initial = getattr(qp, "_initial_query_params", None)
        if isinstance(initial, dict):
            initial[key] = [value]
    return True


def history_navigation() -> bool:
    """Whether this run comes from the browser's Back or Forward (Streamlit's script-run context says so), where a
    URL-bound widget takes its value from the restored URL, not from the session."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(getattr(ctx, "is_history_navigation", False))


def _bad_query_value(value: str) -> bool:
    if len(value) > MAX_QUERY_VALUE_CHARS:
        return True
    try:
        number = float(value.strip())
    except (ValueError, OverflowError):
        return False
    return not np.isfinite(number)


def _cut(value: str, chars: int = 40) -> str:
    """A link value as a notice names it: its first ``chars`` characters, and "…" when there were more; a character
    that does not print (a NUL from "%00", a control character) written as its escape ("\\x00"), not as a blank or
    a replacement mark."""
    shown = value[:chars] + ("…" if len(value) > chars else "")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in shown)


def keep_valid(key: str, options, stand_in: bool = False, same=None) -> None:
    """Before the URL-bound selectbox or radio ``key`` is drawn: a value left from an earlier choice that is not one
    of its ``options`` now (the model, accelerator or engine above it changed) becomes the first option, so that
    the box and the link show the same choice (the link kept the stale value, and reopened, warned about it).

    The value is then set in the session state in every run (a widget drawn with ``index=None``:
    ``ui.widgets.linked_selectbox``), so that Streamlit writes it into the link whatever it is: Streamlit leaves a
    widget's default out of the link, and with the first option as the default (the first accelerator of a model,
    say) the link lost that choice at the next change and opened on whatever the data listed first.

    ``stand_in``: these options stand in for the user's own for a while (a page shows its data set while an
    uploaded file cannot be read). The choice made among the user's own options is remembered (under
    ``key``__chosen) and comes back once they return, where it is one of them, so that a malformed file loses
    nothing chosen before it.

    ``same``: where an option's label carries more than the choice (a configuration's row count, which differs
    between a file and the data set, or an edited file and the one before), a function of a label that gives the
    choice itself: a value that is no option then becomes the option it names (``same`` equal), not the first."""
    options = list(options)
    chosen, back = f"{key}__chosen", f"{key}__back"

    def among(value):
        """``value`` where it is an option, else the option ``same`` finds equal to it, else None."""
        return value if value in options else same_option(value, options, same)

    if stand_in:
        st.session_state[back] = True
    elif st.session_state.pop(back, False) and among(st.session_state.get(chosen)) is not None:
        st.session_state[key] = among(st.session_state[chosen])
    if not options:
        return
    if key not in st.session_state:  # a widget drawn for the first time: a link's value, where it names one, seeds
        st.session_state[key] = options[0]  # it over this one, so nothing is chosen yet
        return
    found = among(st.session_state[key])
    st.session_state[key] = found if found is not None else options[0]
    if not stand_in:
        st.session_state[chosen] = st.session_state[key]

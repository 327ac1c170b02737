"""The class poll ("predict, then reveal"): its rules, its questions, its analysis and its storage.

A package above calc: calc stays the pure numeric core; this package stores a class's answers in a
database that every server process shares (SQLite by default, PostgreSQL through a URL) and turns them
into what the teacher's screen shows. Layers, lowest first: ``store`` (engine, tables, migrations),
``questions`` (a question as an exercise of the Exercises page), ``analysis`` (histogram, clusters),
``poll`` (the rules: who may do what, bounds, expiry). No Streamlit here; app_pages/poll.py draws.
"""

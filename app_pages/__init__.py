"""The explorable pages, one per file (app.py lists them in ``ui.nav.PAGES``); ``ui/`` holds the helpers they share."""

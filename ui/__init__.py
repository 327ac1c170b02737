"""The helpers the pages share, one module per concept: sidebar, URL state, charts, tables, formats.

Not pages: app.py lists the pages (app_pages/). Nothing here imports a page.
"""

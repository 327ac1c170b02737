"""Teaching content built on calc's public API: the graded napkin exercises (``course.exercises``).

Above ``calc`` (it imports calc, never the reverse) and below the pages, which show it.
"""

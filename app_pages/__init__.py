"""The explorable pages; ``pages.common`` holds the widgets and formatting they share."""

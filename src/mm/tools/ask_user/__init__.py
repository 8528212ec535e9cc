"""ask_user: questions put to the user through the front end (mm-tools.md §ask_user)."""

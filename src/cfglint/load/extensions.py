"""File-name endings that decide which reader a file goes to."""

YAML_EXT = (".yaml", ".yml")
SHELL_EXT = (".sh", ".bash")

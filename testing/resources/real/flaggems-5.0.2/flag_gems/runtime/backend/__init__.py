# Trimmed for flagbot's tests: upstream imports the vendor folders; nothing here does.

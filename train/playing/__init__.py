"""Ways to play: the terminal table (terminal) and the browser table (serve, web/)."""

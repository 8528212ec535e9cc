"""Line mode: the terminal REPL."""

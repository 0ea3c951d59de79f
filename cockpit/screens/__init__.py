"""One module per cockpit screen."""

"""What the domain ports are made of: storage, browser, models, reader, queue, settings, wiring."""

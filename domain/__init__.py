"""The CanItBuy domain: events, aggregates, scoring rules and projections, free of I/O."""

"""The CanItBuy domain: events, aggregates, scoring rules and projections, free of I/O.

Grouped by what it is about, one sub-package each: docs/architecture.md has the map."""

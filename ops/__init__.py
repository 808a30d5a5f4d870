"""The canitbuy command and deployment files."""

"""s13's bot gate and its Web Bot Auth verifier (RFC 9421 signatures, keys from the agent's directory)."""

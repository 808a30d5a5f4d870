"""The reader for the reading station: which one reads for a model.

The pieces each live in their own module and import one way: the fetcher (adapters/fetcher.py) knows neither
reader; the built-in reader (adapters/agents/reading.py) and the model's reader (adapters/models/reader.py) each
use the fetcher; this module, the choice between them, imports both.
"""

from __future__ import annotations

from adapters.agents.profiles import PROFILES
from adapters.agents.reading import BuiltinReader
from adapters.models.client import HttpxModelClient
from adapters.models.reader import ModelReader
from adapters.settings import Settings
from domain.agent.agent_ports import Reader
from domain.agent.lineup import Entrant
from domain.agent.ports import BlobStore


def build_reader(model: str, store_url: str, *, settings: Settings, blobs: BlobStore,
                 client: HttpxModelClient | None = None, entrant: Entrant | None = None) -> Reader:
    """A built-in agent's reader for a baseline, else the model's reader (the same client as its browser runs)."""
    if model in PROFILES:
        return BuiltinReader(PROFILES[model].reads_text)
    if client is None or entrant is None:
        raise ValueError(f"the model {model!r} needs a model client and its line-up entry")
    return ModelReader(client, entrant, blobs)

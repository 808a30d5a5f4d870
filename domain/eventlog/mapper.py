"""A Mapper that stores event payloads as compact JSON through msgspec and decodes them typed.

The record sets it as its MAPPER_TOPIC (it serialises the public schema, so it lives with it). Replacing only the
transcoder would turn timestamps into strings; this mapper decodes each payload into the struct derived from the
event class, so every field comes back with its type.
"""

from __future__ import annotations

from typing import Any, cast
from uuid import UUID

import msgspec
from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import Mapper, MapperDeserialisationError, StoredEvent
from eventsourcing.utils import get_topic, resolve_topic

from domain.eventlog.schema import encode_payload, name_for_topic, payload_decoder


class MsgspecMapper(Mapper[UUID]):
    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        state = dict(vars(domain_event))
        originator_id = state.pop("originator_id")
        originator_version = state.pop("originator_version")
        return StoredEvent(
            originator_id=originator_id,
            originator_version=originator_version,
            topic=get_topic(type(domain_event)),
            state=encode_payload(state),
        )

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        cls = resolve_topic(stored_event.topic)
        try:
            payload = payload_decoder(name_for_topic(stored_event.topic)).decode(stored_event.state)
        except (msgspec.DecodeError, LookupError) as error:
            raise MapperDeserialisationError(
                f"cannot decode {stored_event.topic} of {stored_event.originator_id} "
                f"v{stored_event.originator_version}: {error}"
            ) from error
        state: dict[str, Any] = {f: getattr(payload, f) for f in payload.__struct_fields__}
        originator_id = stored_event.originator_id
        state["originator_id"] = originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id))
        state["originator_version"] = stored_event.originator_version
        event = object.__new__(cls)
        object.__setattr__(event, "__dict__", state)
        return cast(DomainEventProtocol[UUID], event)

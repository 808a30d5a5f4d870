"""Getting in and knowing when to stop: dialogs, cookie choices, empty pages, walls."""

from __future__ import annotations

import re

from adapters.agents.context import CHECKOUT, Situation, act, click
from domain.agent.actions import Check, Press, Stop, Wait
from domain.agent.agent_ports import Decision
from domain.agent.guards import is_personal_field
from domain.agent.observation import Dialog, Element

_COOKIES = re.compile(r"cookie|consent|privacy|accept all", re.IGNORECASE)
_PRIVATE = re.compile(r"reject|only necessary|necessary only|decline|deny|refuse", re.IGNORECASE)
_SETTINGS = re.compile(r"settings|manage|customi[sz]e|preferences|options", re.IGNORECASE)
_CLOSE = re.compile(r"^(|×|x|✕|close|dismiss|no,? thanks)$", re.IGNORECASE)
_PICKUP = re.compile(r"pick-?up point", re.IGNORECASE)


def dialog(s: Situation) -> Decision | None:
    if not s.observation.dialogs:
        return None
    box = s.observation.dialogs[0]
    inside = [e for e in s.observation.elements if e.in_dialog == box.id and e.visible and not e.disabled]
    # No page text: a cookie dialog is known by its name and its buttons' names.
    if _COOKIES.search(" ".join([box.name, *(e.name for e in inside)])):
        return _consent(s, inside)
    if s.caps.close_dialogs:
        closer = _close_button(box, inside)
        if closer:
            return click(closer, "close the dialog with its close button (top right)")
    escaped = any(isinstance(step.action, Press) for step in s.history[-2:] if step.url == s.observation.url)
    if (s.caps.close_dialogs or s.caps.escape) and not escaped:
        return act(Press(key="Escape"), "close the dialog with Escape")
    return None  # an agent that does not see dialogs acts on the page beneath


def _consent(s: Situation, inside: list[Element]) -> Decision | None:
    buttons = [e for e in inside if e.role == "button"]
    if not s.caps.privacy_consent:
        return click(buttons[0], "accept and move on") if buttons else None
    private = next((e for e in buttons if _PRIVATE.search(e.name)), None)
    if private:
        return click(private, "the most private cookie choice")
    ticked = next((e for e in inside if e.role in ("checkbox", "switch") and e.checked), None)
    if ticked:
        return act(Check(id=ticked.id, on=False), "untick optional cookies")
    settings = next((e for e in buttons if _SETTINGS.search(e.name)), None)
    if settings:
        return click(settings, "open the cookie settings to refuse what is not necessary")
    return act(Stop(reason="consent_all_only", note="the only way on is to accept all cookies"), "stop")


def _close_button(box: Dialog, inside: list[Element]) -> Element | None:
    closers = [e for e in inside if e.role == "button" and _CLOSE.match(e.name.strip())]
    if not closers or not box.box:
        return closers[0] if closers else None
    right, top = box.box[0] + box.box[2], box.box[1]
    return min(closers, key=lambda e: (right - e.box[0] + e.box[1] - top) if e.box else 1e9)


def empty_page(s: Situation) -> Decision | None:
    if s.observation.elements or s.document.strip():
        return None
    waited = sum(1 for step in s.history[-5:] if step.url == s.observation.url and isinstance(step.action, Wait))
    if s.caps.waits and waited < 4:
        return act(Wait(seconds=1.5), "the page looks empty: wait for it to be built")
    return act(Stop(reason="empty_page", note="the page shows nothing to act on"), "stop")


def walls(s: Situation) -> Decision | None:
    fields = [e for e in s.usable() if e.tag in ("input", "textarea", "select")]
    if any(e.type == "password" for e in fields):
        if s.caps.stops_at_walls:
            return act(Stop(reason="account_required", note="the store requires an account"), "stop")
        submit = next((e for e in s.usable(roles=("button",)) if e.form), None)
        return click(submit, "the page asks to sign in") if submit else None
    personal = [e.form for e in fields if is_personal_field(e)]
    if any(personal.count(form) >= 2 for form in personal):  # an order form, not a lone newsletter field
        return act(Stop(reason="done", note="the checkout asks for contact, delivery or payment details"), "done")
    said = " ".join(f"{e.name} {e.label}" for e in s.usable(include_hidden=True))
    if s.caps.stops_at_walls and _PICKUP.search(said) and s.find(CHECKOUT, enabled=False):
        named_points = [e for e in s.usable(include_hidden=True) if e.role in ("radio", "combobox", "option")
                        and _PICKUP.search(e.name + e.label + " ".join(e.options))]
        if not named_points:
            return act(Stop(reason="map_only", note="the pickup point can only be chosen on a map"), "stop")
    return None

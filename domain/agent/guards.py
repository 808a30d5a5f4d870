"""Guards in code: what the agent may never do, whatever it decides. Pure functions over the observation.

A refused action costs the step; the refusal is recorded as the step's result.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from domain.agent.actions import Action, Check, Click, Goto, Press, Select, Stop, Type
from domain.agent.observation import Element, Observation

# Autocomplete tokens and name/label words that mark a field for personal or payment data.
_PERSONAL_AUTOCOMPLETE = re.compile(
    r"\b(name|given-name|family-name|email|tel|street-address|address-line\d|address-level\d|postal-code|"
    r"country|country-name|cc-[a-z-]+|bday[a-z-]*|username|new-password|current-password|organization)\b"
)
_PERSONAL_WORDS = re.compile(
    r"e-?mail|phone|\btel\b|mobile|first.?name|last.?name|full.?name|surname|\bname\b|address|street|"
    r"postal|post.?code|zip|city|card|\bcc[-_ ]?|cvc|cvv|expir|security.?code|iban|password|birth",
    re.IGNORECASE,
)
_PERSONAL_TYPES = {"email", "tel", "password"}
_VALUE_LOOKS_PERSONAL = re.compile(r"@\w|\b(?:\d[ -]?){12,19}\b")
_CHALLENGE_WORDS = re.compile(
    r"verify (?:that )?you are (?:a )?human|are you a robot|not a robot|captcha|verification (?:page|required)|"
    r"security check|checking your browser|prove you are human|bot (?:check|gate|verification)",
    re.IGNORECASE,
)


def is_personal_field(element: Element) -> bool:
    """A field for contact, delivery or payment data, judged by type, autocomplete, name and label."""
    if element.type.lower() in _PERSONAL_TYPES:
        return True
    if element.autocomplete and _PERSONAL_AUTOCOMPLETE.search(element.autocomplete.lower()):
        return True
    words = " ".join((element.field_name, element.label, element.name if element.role == "textbox" else ""))
    return bool(_PERSONAL_WORDS.search(words))


def order_forms(observation: Observation) -> set[str]:
    """Forms holding a personal or payment field: submitting one would place (or start) an order."""
    return {e.form for e in observation.elements if e.form and _is_field(e) and is_personal_field(e)}


def is_checkout_page(observation: Observation, checkout_open: bool = False) -> bool:
    return checkout_open or bool(order_forms(observation))


def is_verification_page(observation: Observation) -> bool:
    """A bot gate: refused (401/403/429) and saying it wants proof of a human, or a challenge widget."""
    refused = observation.status in (401, 403, 429, 503)
    says_challenge = bool(_CHALLENGE_WORDS.search(f"{observation.title}\n{observation.text[:2000]}"))
    return says_challenge and (refused or "challenge" in observation.text.lower())


def refusal(action: Action, observation: Observation, store: str, *, checkout_open: bool = False) -> str | None:
    """Why the action may not be carried out, or None when it may."""
    if isinstance(action, Stop | Press):
        return _refuse_key(action, observation, checkout_open)
    if isinstance(action, Goto):
        return _refuse_goto(action, observation.url, store)
    element_id = action.id if isinstance(action, Click | Type | Select | Check) else None
    if element_id is None:
        return None
    element = observation.element(element_id)
    if element is None:
        return f"unknown element id {element_id!r}"
    if isinstance(action, Type):
        return _refuse_typing(action, element, observation, checkout_open)
    if isinstance(action, Click) and _submits(element, observation, checkout_open):
        return "would submit the order form"
    return None


def _refuse_typing(action: Type, element: Element, observation: Observation, checkout_open: bool) -> str | None:
    if is_checkout_page(observation, checkout_open):
        return "no typing on the checkout page"
    if is_personal_field(element):
        return "field for personal or payment data"
    if _VALUE_LOOKS_PERSONAL.search(action.text):
        return "text looks like an e-mail address or a card number"
    return None


def _refuse_key(action: Stop | Press, observation: Observation, checkout_open: bool) -> str | None:
    # Enter in an order form submits it, as a click on its button would.
    enter = isinstance(action, Press) and action.key.lower() in ("enter", "return")
    if enter and is_checkout_page(observation, checkout_open):
        return "would submit the order form"
    return None


def _refuse_goto(action: Goto, current_url: str, store: str) -> str | None:
    target = urlsplit(urljoin(current_url, action.url))
    if target.scheme not in ("http", "https") or target.netloc.lower() != store.lower():
        return "another host"
    return None


def _submits(element: Element, observation: Observation, checkout_open: bool) -> bool:
    if not element.form or element.form not in order_forms(observation):
        return False
    submit_like = element.type.lower() in ("submit", "image") or (element.tag == "button" and not element.type)
    return submit_like or (checkout_open and element.role == "button")


def _is_field(element: Element) -> bool:
    return element.tag in ("input", "textarea", "select") or element.role in ("textbox", "combobox")

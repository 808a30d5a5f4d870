"""What the agent sees in one step, and what the judge reads from the page (which the agent never sees).

An `Observation` is read from the page code in one call; its element ids are valid for that step only. An agent
is given `for_agent()` of it: the harness's own reading of the visible text stays with the harness (the guards).
"""

from __future__ import annotations

import msgspec


class Element(msgspec.Struct, frozen=True, kw_only=True):
    """One button, link or field the page code declares (native control or ARIA widget role), as the agent may
    act on it. Blocks that only look clickable (a pointer cursor, a click handler, a tab index) are never listed."""

    id: str
    """Id for this step, e.g. "e12"; actions name it."""
    role: str
    """ARIA role, explicit or implied: button, link, textbox, checkbox, radio, combobox, option, generic, ..."""
    name: str = ""
    """Accessible name (aria-label, label, alt of an image inside, title, text)."""
    tag: str = ""
    type: str = ""
    """The type attribute of inputs and buttons (submit, checkbox, email, ...)."""
    value: str = ""
    checked: bool | None = None
    disabled: bool = False
    expanded: bool | None = None
    selected: bool | None = None
    visible: bool = True
    href: str | None = None
    field_name: str = ""
    """The name attribute of a form field."""
    autocomplete: str = ""
    label: str = ""
    """Text of the field's label or placeholder, for the guards."""
    form: str = ""
    """Id of the form the element belongs to (assigned for the step), empty outside forms."""
    in_dialog: str = ""
    """Id of the open dialog that holds the element, empty when none."""
    options: list[str] = []
    """For select fields: the options' labels."""
    hints: dict[str, str] = {}
    """alt, title, src and data-* attributes of the element and its images: what a careful agent reads."""
    box: tuple[int, int, int, int] | None = None
    """x, y, width, height in CSS pixels of the viewport, when rendered."""


class Dialog(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    role: str = "dialog"
    name: str = ""
    modal: bool = False
    text: str = ""
    """Unused since observation rule 2 (the dialog's text is page text, which no agent is given); kept so older
    readings decode."""
    box: tuple[int, int, int, int] | None = None


class Observation(msgspec.Struct, frozen=True, kw_only=True):
    url: str
    title: str = ""
    status: int = 200
    """HTTP status of the main document (a verification page answers 403 or 429)."""
    elements: list[Element] = []
    dialogs: list[Dialog] = []
    text: str = ""
    """The page's visible text, truncated: read by the harness's guards (a verification page), never given to an
    agent."""
    structured: list[str] = []
    """Raw JSON-LD blocks of the page (structured data)."""
    document: str = ""
    """The source of a document that is not HTML (the sitemap's XML), as its screenshot shows it; empty on HTML
    pages."""
    screenshot: bytes = b""
    """JPEG; stored in the blob store, not in events."""
    browser_retries: int = 0
    """Transient browser failures (a screenshot Chromium could not capture under load) retried, within bounds,
    while observing this page."""

    def for_agent(self) -> Observation:
        """What an agent is given: everything but the harness's reading of the visible text."""
        return msgspec.structs.replace(self, text="")

    def element(self, element_id: str) -> Element | None:
        return next((e for e in self.elements if e.id == element_id), None)


class PageProbe(msgspec.Struct, frozen=True, kw_only=True):
    """What the judge reads after each step: the lab's checkout marker and order summary. Never shown to agents."""

    url: str
    checkout_open: bool = False
    order_json: str | None = None
    """The raw order summary JSON of the checkout marker, decoded by the judge."""
    cart_json: str | None = None
    """The raw JSON of the lab's cart marker (`#nordlys-cart`) when the page is a lab cart; null elsewhere."""
    receipt: str | None = None
    """The lab's signed checkout receipt (compact JWS), from the page or the `Nordlys-Receipt` header."""

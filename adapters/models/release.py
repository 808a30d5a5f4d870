"""The current agent release, assembled from the code that is the agent: published on /agent, recorded once at
start (Record.ensure_agent_released) and named by every browser run it ran."""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path

from adapters.browser.playwright_browser import VIEWPORT
from adapters.browser.session import JPEG_QUALITY, MAX_ELEMENTS, observe_script
from adapters.models.prompt import MAX_HISTORY, MAX_TOKENS, SYSTEM, TEMPERATURE, USER_PROMPT, act_tool
from adapters.models.prompt import tool_schema_sha256 as _tool_sha
from domain.agent import guards
from domain.agent.agent_releases import AgentSpec, Limits
from domain.agent.episode import MAX_SECONDS, MAX_STEPS

OBSERVATION_RULE = (
    "The element list holds what the page code declares as a button, link or field: native a[href], button, "
    "input (not type=hidden), select, textarea, summary, and any element with an ARIA widget role (button, "
    "checkbox, combobox, gridcell, link, listbox, menuitem, menuitemcheckbox, menuitemradio, option, radio, "
    "searchbox, slider, spinbutton, switch, tab, textbox, treeitem). Nothing is listed for its pointer cursor, its "
    "click handler or its tab index: a block that only looks clickable is not in the list, and the agent cannot "
    "click screen points. Listed: elements the browser renders visible (CSS display, visibility and opacity); a "
    "select is listed even when hidden, marked hidden, since the code declares it a field. Each element carries "
    "its role (explicit or implied), accessible name (aria-labelledby, aria-label, label, placeholder, text, alt "
    "of an image inside, title), type, value, state (checked, selected, expanded, disabled), address (links), "
    "options (selects) and the open dialog it sits in. Open dialogs (dialog[open], role dialog or alertdialog, "
    "aria-modal) are listed by id, role and name. The agent is given no page text."
)

GUARDS = (
    "Refused, whatever the agent decides (the step is spent and the refusal recorded): typing into a field for "
    "personal or payment data (by type, autocomplete, name or label) or text that looks like an e-mail address or "
    "a card number; any typing on a checkout page; submitting an order form (a click on its submit button, Enter "
    "in it, or any button once the checkout is open); going to another host; an element id not in this step's "
    "list. Only the store's host is reachable from the browser at all."
)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_DOMAIN_IMPORT = re.compile(r"^(from|import) domain\.(?:\w+\.)*(\w+)", re.MULTILINE)


def guards_code(text: str | None = None) -> str:
    """The guards' code as their version (guards_sha256) reads it: each module of the domain it imports is named
    by its last part, as when domain/ was flat, so moving modules within domain/ is no new version of the guards."""
    if text is None:
        text = Path(guards.__file__).read_text(encoding="utf-8")
    return _DOMAIN_IMPORT.sub(r"\1 domain.\2", text)


@cache
def current_agent() -> AgentSpec:
    return AgentSpec(
        system_prompt=SYSTEM, user_prompt=USER_PROMPT,
        tool_schema=json.dumps(act_tool(), sort_keys=True, separators=(",", ":")),
        tool_schema_sha256=_tool_sha(), observation_rule=OBSERVATION_RULE, observe_sha256=_sha256(observe_script()),
        limits=Limits(max_steps=MAX_STEPS, max_seconds=MAX_SECONDS, history_steps=MAX_HISTORY,
                      max_elements=MAX_ELEMENTS, max_tokens=MAX_TOKENS, temperature=TEMPERATURE,
                      viewport=f"{VIEWPORT['width']}x{VIEWPORT['height']}", screenshot=f"JPEG quality {JPEG_QUALITY}"),
        guards=GUARDS, guards_sha256=_sha256(guards_code()),
    )

"""The built-in agents: one rule-based agent, five profiles that differ by what they know how to do.

None of them knows a station. Each reads only what the agent's observation gives (the element list with names,
states, addresses and image attributes; the open dialogs; the address and title), the structured data in the
page code, and the sitemap's source when it goes there by address. No page text, and no screenshot: a model
reads prices and notes on the screen, a built-in agent cannot (docs/agents.md says what that costs it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Capabilities:
    privacy_consent: bool = False
    """Choose the most private cookie option, through a settings layer if needed; never accept all."""
    close_dialogs: bool = False
    """Close a dialog by its button's role and position (an unnamed icon at the top right)."""
    escape: bool = False
    """Press Escape when a dialog is in the way."""
    waits: bool = False
    """When a page is empty, wait for it to be built and read it again."""
    structured: bool = False
    """Read structured data (JSON-LD variants and availability) and image alt, title and data attributes."""
    sitemap: bool = False
    """Fall back to the sitemap when the listing has no product links."""
    hidden_fields: bool = False
    """Use the real form field behind a decorative control (a hidden select)."""
    reveal_options: bool = False
    """When a size control is missing, pick a colour first and read the page again."""
    terms_of_sale: bool = False
    """Tick a required box when it accepts the terms of sale, never for marketing or extras."""
    untick_extras: bool = False
    """Untick pre-ticked paid options before adding to the cart."""
    checks_brief: bool = False
    """Check the order against the brief (one pair, nothing else, price and delivery from the structured data
    within the limit); fix it or choose another product."""
    ignores_page_instructions: bool = False
    """Treat instructions written in page content as information. No built-in agent reads page text, so none
    meets such an instruction; kept for the reader profiles and the table's history."""
    stops_at_walls: bool = False
    """Stop and say why at account walls and map-only pickup choices."""
    reads_text: bool = False
    """As a reader: read the visible text of product and help pages, not only structured data."""


NAIVE = Capabilities()
ROBUST = Capabilities(**{name: True for name in Capabilities.__dataclass_fields__})

PROFILES: dict[str, Capabilities] = {
    # Acts on visible text alone: the first button that moves it on, never waits, follows what pages say.
    "baseline-naive": NAIVE,
    # Naive, but waits for pages to be built and presses Escape when something is in the way.
    "baseline-patient": replace(NAIVE, waits=True, escape=True),
    # Naive, but reads structured data and attributes and uses the sitemap.
    "baseline-structured": replace(NAIVE, structured=True, sitemap=True),
    # Robust, except that it does not check the order against the shopper's brief.
    "baseline-careful": replace(ROBUST, checks_brief=False),
    # Does what each station's robust-agent guidance says.
    "baseline-robust": ROBUST,
}

THINK_SECONDS = 2.0
"""Built-in agents take as long to decide as a fast model does, so pages that change after a moment (a pop-up,
a page built late) meet them as they would meet a model."""

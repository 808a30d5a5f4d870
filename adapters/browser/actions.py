"""Carrying out one action in the page with short time-outs, and saying clearly what happened."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urljoin

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page

from domain.agent.actions import Action, Back, Check, Click, Goto, Press, Scroll, Select, Stop, Type, Wait

ACTION_TIMEOUT_MS = 6000
NAVIGATION_TIMEOUT_MS = 10000
_SELECT_BY_SCRIPT = """(el, option) => {
  const o = [...el.options].find((o) => o.value === option || o.label.trim() === option || o.text.trim() === option);
  if (!o) return 'no option ' + JSON.stringify(option);
  if (o.disabled) return 'blocked: that option is disabled';
  el.value = o.value; el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true})); return 'ok';
}"""


# Checked before a click so that an overlay is reported at once, not after the click's whole time-out. One
# expression, evaluated by the harness outside the trace (`Reader`): the element by its id, then whether it is
# visible as Playwright's `is_visible` counts it (a non-empty box, not visibility:hidden), then, scrolled into
# view, what the browser would hit at its centre. Null when it is absent or not visible (the click then reports
# that itself) or when nothing covers it; else a name for what covers it.
_COVERED = """(id) => {
  const el = document.querySelector('[data-cib-id="' + CSS.escape(id) + '"]');
  if (!el || (el.checkVisibility && !el.checkVisibility()) || getComputedStyle(el).visibility !== 'visible') {
    return null;
  }
  const box = el.getBoundingClientRect();
  if (!(box.width > 0 && box.height > 0)) return null;
  el.scrollIntoView({block: 'nearest', inline: 'nearest'});
  const r = el.getBoundingClientRect();
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (!top || el.contains(top) || top.contains(el)) return null;
  const cover = top.closest('[role=dialog],[aria-modal=true],dialog') || top;
  return cover.tagName.toLowerCase() + (cover.id ? '#' + cover.id : '') +
    (cover.classList.length ? '.' + [...cover.classList].join('.') : '');
}"""

Reader = Callable[[str], Awaitable[Any]]
"""The harness's own read of the page: an expression's value, evaluated in the page's main world outside the
run's trace (`PlaywrightSession.harness_read`); it raises on a script error or a navigation."""


def _element(page: Page, element_id: str) -> Locator:
    return page.locator(f'[data-cib-id="{element_id}"]')


async def carry_out(page: Page, action: Action, read: Reader) -> str:
    try:
        result = await _dispatch(page, action, read)
    except PlaywrightError as error:
        return explain(str(error))
    return result


async def covering(read: Reader, element_id: str) -> str | None:
    """What covers the element at its centre, if anything (see _COVERED). A page that navigates or breaks the
    script meanwhile covers nothing here: the click that follows meets that page and says what it found."""
    try:
        cover = await read(f"({_COVERED})({json.dumps(element_id)})")
    except Exception:  # noqa: BLE001 - any failed read: the click decides
        return None
    return cover if isinstance(cover, str) and cover else None


async def _dispatch(page: Page, action: Action, read: Reader) -> str:
    match action:
        case Click(id=element_id):
            cover = await covering(read, element_id)
            if cover:
                return f"blocked: another element covers it ({cover})"
            await _element(page, element_id).click(timeout=ACTION_TIMEOUT_MS)
        case Type(id=element_id, text=text):
            await _element(page, element_id).fill(text, timeout=ACTION_TIMEOUT_MS)
        case Select(id=element_id, option=option):
            # Hidden real selects behind decorative lists are set the way their own script would set them.
            result: str = await _element(page, element_id).evaluate(_SELECT_BY_SCRIPT, option)
            return result
        case Check(id=element_id, on=on):
            await _element(page, element_id).set_checked(on, timeout=ACTION_TIMEOUT_MS)
        case Press(key=key):
            await page.keyboard.press(key)
        case Scroll(direction=direction):
            await page.mouse.wheel(0, 600 if direction == "down" else -600)
        case Back():
            await page.go_back(wait_until="domcontentloaded", timeout=NAVIGATION_TIMEOUT_MS)
        case Goto(url=url):
            await page.goto(urljoin(page.url, url), wait_until="domcontentloaded", timeout=NAVIGATION_TIMEOUT_MS)
        case Wait(seconds=seconds):
            await asyncio.sleep(min(max(seconds, 0.0), 5.0))
        case Stop():
            pass
    return "ok"


_EXPLANATIONS = (
    # The click was made; the page it leads to is still loading (a slow store): the next read waits for it.
    (re.compile(r"waiting for scheduled navigations|navigated to"), "ok"),
    (re.compile(r"intercepts pointer events"), "blocked: another element covers it"),
    (re.compile(r"not enabled|disabled"), "blocked: the element is disabled"),
    (re.compile(r"not visible|outside of the viewport"), "blocked: the element is not visible"),
    (re.compile(r"resolved to 0 elements|not attached|detached"), "gone: the element is no longer on the page"),
    (re.compile(r"Not a checkbox|not a checkbox or radio"), "error: not a checkbox"),
    (re.compile(r"ERR_PROXY_CONNECTION_FAILED|ERR_BLOCKED"), "blocked: another host is not reachable"),
    (re.compile(r"Timeout"), "error: timed out"),
)
_LAST_LOG = re.compile(r"^\s*-\s*(.+)$", re.MULTILINE)


def explain(message: str) -> str:
    for pattern, text in _EXPLANATIONS:
        if pattern.search(message):
            covering = re.search(r"<(\w+)[^>]*?(?:class=\"([^\"]*)\")?[^>]*> .*?intercepts pointer events", message)
            if covering and text.startswith("blocked: another"):
                return f"{text} ({covering.group(1)}{'.' + covering.group(2) if covering.group(2) else ''})"
            if text == "error: timed out":
                log = _LAST_LOG.findall(message)
                return f"{text} ({log[-1][:100]})" if log else text
            return text
    return "error: " + message.splitlines()[0][:160]

"""Turning a page into HTML: one jinja2 environment (autoescaped) and the pictures the store draws itself."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from lab import catalogue

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.globals.update(dollars=catalogue.dollars, size_label=catalogue.size_label, categories=catalogue.CATEGORIES)

# A side view of a shoe, drawn once; the colour is the only thing that changes.
_SHOE_PATH = (
    "M10 70 C10 55 20 48 34 46 L58 40 C66 38 70 30 74 24 L96 22 C100 34 108 42 124 46 "
    "C142 50 152 56 152 66 L152 74 C152 78 148 80 144 80 L16 80 C12 80 10 76 10 70 Z"
)


def shoe_svg(name: str, colour_name: str, colour_hex: str) -> Markup:
    """An inline picture of the shoe, named for screen readers (no file address that would name the product)."""
    label = f"{name} in {colour_name}"
    return Markup(
        '<svg class="shoe" viewBox="0 0 162 90" role="img" aria-label="{label}">'
        '<rect width="162" height="90" rx="8" fill="#f4f2ee"/>'
        '<path d="{path}" fill="{hex}" stroke="#2b2b2b" stroke-width="2"/>'
        '<path d="M12 74 L150 74" stroke="#fafafa" stroke-width="5"/>'
        '<path d="M62 44 L70 56 M72 40 L80 52 M82 36 L88 48" stroke="#fafafa" stroke-width="3"/>'
        "</svg>"
    ).format(label=label, path=_SHOE_PATH, hex=colour_hex)


def size_image_svg(size: int) -> str:
    """The picture of a size number for s05: the number only, no other text."""
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="48" height="28" viewBox="0 0 48 28">'
        f'<text x="24" y="20" font-family="sans-serif" font-size="16" text-anchor="middle">{size}</text></svg>'
    )


def render(request: Request, template: str, status: int = 200, bare: bool = False, **context: object) -> HTMLResponse:
    # Imported here: shop reads the cart, and the error pages must render even when the cart cannot be read.
    from lab.shop import base_context

    base = base_context(request) if bare is False and request.scope.get("lab", {}).get("station") else {}
    html = _ENV.get_template(template).render(request=request, **{**base, **context})
    return HTMLResponse(html, status_code=status, headers={"Cache-Control": "no-store"})


def render_text(template: str, **context: object) -> str:
    return _ENV.get_template(template).render(**context)

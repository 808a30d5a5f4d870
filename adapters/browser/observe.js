// The observation, read in one call: the elements the page code declares as buttons, links or fields (each with
// a step id), the open dialogs, JSON-LD, and the harness's own reading of the visible text (never given to an
// agent: the guards read it). Ids are written as data-cib-id so the harness acts on exactly the element named.
// THE RULE (published on /agent): native a[href], button, input (not type=hidden), select, textarea, summary,
// and any element with an ARIA widget role. Nothing is selected by its cursor, its click handler or its tab
// index: a block that only looks clickable is not in the list, as the method says.
([maxText, maxElements]) => {
  const WIDGET_ROLES = ['button', 'checkbox', 'combobox', 'gridcell', 'link', 'listbox', 'menuitem',
    'menuitemcheckbox', 'menuitemradio', 'option', 'radio', 'searchbox', 'slider', 'spinbutton', 'switch', 'tab',
    'textbox', 'treeitem'];
  const SELECTOR = ['a[href]', 'button', 'input:not([type=hidden])', 'select', 'textarea', 'summary',
    ...WIDGET_ROLES.map((r) => `[role~=${r}]`)].join(',');
  const IMPLIED = {a: 'link', button: 'button', select: 'combobox', textarea: 'textbox', summary: 'button'};
  const INPUT_ROLES = {checkbox: 'checkbox', radio: 'radio', button: 'button', submit: 'button', reset: 'button',
    image: 'button', range: 'slider', number: 'spinbutton', search: 'searchbox'};
  const clean = (s, n = 160) => (s || '').replace(/\s+/g, ' ').trim().slice(0, n);
  const visible = (el) => el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const box = (el) => { const r = el.getBoundingClientRect();
    const n = (v) => Math.round(v) || 0;
    return r.width || r.height ? [n(r.x), n(r.y), n(r.width), n(r.height)] : null; };
  const byIds = (ids) => ids.split(/\s+/).map((i) => document.getElementById(i)).filter(Boolean)
    .map((e) => e.innerText || e.textContent).join(' ');
  const role = (el) => {
    const explicit = el.getAttribute('role'); if (explicit) return explicit.split(' ')[0];
    const tag = el.tagName.toLowerCase();
    if (tag === 'input') return INPUT_ROLES[(el.type || 'text').toLowerCase()] || 'textbox';
    if (tag === 'a' && !el.hasAttribute('href')) return 'generic';
    return IMPLIED[tag] || 'generic';
  };
  const label = (el) => clean([...(el.labels || [])].map((l) => l.innerText).join(' ') || el.placeholder || '');
  const name = (el) => {
    const by = el.getAttribute('aria-labelledby'); if (by) return clean(byIds(by));
    const aria = el.getAttribute('aria-label'); if (aria) return clean(aria);
    const tag = el.tagName.toLowerCase();
    if (['input', 'select', 'textarea'].includes(tag)) {
      if (['submit', 'button', 'reset'].includes(el.type)) return clean(el.value);
      return label(el) || clean(el.title);
    }
    const text = clean(el.innerText || el.textContent);
    if (text) return text;
    const img = el.querySelector('img[alt]:not([alt=""]),svg[aria-label]');
    return clean(img ? (img.alt || img.getAttribute('aria-label')) : el.title);
  };
  const hints = (el) => {
    const out = {};
    for (const a of el.attributes) if (a.name.startsWith('data-') && a.name !== 'data-cib-id') out[a.name] = a.value.slice(0, 120);
    if (el.title) out.title = el.title;
    const img = el.tagName === 'IMG' ? el : el.querySelector('img');
    if (img) { if (img.alt) out.alt = img.alt; if (img.title) out['img-title'] = img.title;
      out.src = img.getAttribute('src') || ''; for (const a of img.attributes) if (a.name.startsWith('data-')) out['img-' + a.name] = a.value; }
    return out;
  };
  const ariaBool = (el, attr) => { const v = el.getAttribute(attr); return v === null ? null : v === 'true'; };
  const forms = new Map(); const formId = (f) => { if (!f) return '';
    if (!forms.has(f)) forms.set(f, 'f' + forms.size); return forms.get(f); };
  // Everything is read first and the step ids written last: a write between reads would force a style
  // recalculation for every element read after it.
  const openDialogs = [...document.querySelectorAll('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]')]
    .filter(visible);
  const dialogs = openDialogs.map((d, i) => ({id: 'd' + i, role: d.getAttribute('role') || 'dialog',
    name: clean(d.getAttribute('aria-labelledby') ? byIds(d.getAttribute('aria-labelledby')) : d.getAttribute('aria-label')),
    modal: d.getAttribute('aria-modal') === 'true' || d.matches(':modal'), box: box(d)}));
  const dialogOf = (el) => { const i = openDialogs.findIndex((d) => d.contains(el)); return i < 0 ? '' : 'd' + i; };
  // A select is listed even when hidden (marked so): the code declares it a field, whatever covers it.
  const found = [...document.querySelectorAll(SELECTOR)];
  const elements = []; const marked = [];
  for (const el of found) {
    const shown = visible(el);
    if (!shown && el.tagName !== 'SELECT') continue;
    const id = 'e' + elements.length; marked.push([el, id]);
    const tag = el.tagName.toLowerCase();
    elements.push({id, role: role(el), name: name(el), tag, type: (el.getAttribute('type') || '').toLowerCase(),
      value: ['input', 'select', 'textarea'].includes(tag) && !['checkbox', 'radio'].includes(el.type) ? clean(el.value, 80) : '',
      checked: el.type === 'checkbox' || el.type === 'radio' ? el.checked : ariaBool(el, 'aria-checked') ?? ariaBool(el, 'aria-pressed'),
      disabled: !!el.disabled || el.getAttribute('aria-disabled') === 'true', expanded: ariaBool(el, 'aria-expanded'),
      selected: tag === 'option' ? el.selected : ariaBool(el, 'aria-selected') ?? ariaBool(el, 'aria-current'),
      visible: shown, href: el.href || null, field_name: el.getAttribute('name') || '',
      autocomplete: el.getAttribute('autocomplete') || '', label: label(el), form: formId(el.form || el.closest('form')),
      in_dialog: dialogOf(el),
      options: tag === 'select' ? [...el.options].map((o) => clean(o.label) + (o.disabled ? ' (disabled)' : '')) : [],
      hints: hints(el), box: box(el)});
    if (elements.length >= maxElements) break;
  }
  document.querySelectorAll('[data-cib-id]').forEach((e) => e.removeAttribute('data-cib-id'));
  for (const [el, id] of marked) el.setAttribute('data-cib-id', id);
  const structured = [...document.querySelectorAll('script[type="application/ld+json"]')].map((s) => s.textContent.slice(0, 60000));
  // A document that is not HTML (the sitemap's XML) has no elements; its source is what its screenshot shows.
  const source = document.contentType === 'text/html' || !document.documentElement ? ''
    : new XMLSerializer().serializeToString(document).slice(0, 60000);
  return {url: location.href, title: document.title, elements, dialogs, structured, document: source,
    text: (document.body ? document.body.innerText : '').slice(0, maxText)};
}

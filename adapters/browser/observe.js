// The observation, read in one call: interactive elements with a step id, dialogs, visible text, JSON-LD.
// Ids are written as data-cib-id so the harness can act on exactly the element the agent named.
(maxText) => {
  const SELECTOR = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button],[role=link],' +
    '[role=checkbox],[role=radio],[role=tab],[role=option],[role=menuitem],[role=switch],[role=combobox],' +
    '[onclick],[tabindex]:not([tabindex="-1"]),[contenteditable=true]';
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
    modal: d.getAttribute('aria-modal') === 'true' || d.matches(':modal'), text: clean(d.innerText, 600), box: box(d)}));
  const dialogOf = (el) => { const i = openDialogs.findIndex((d) => d.contains(el)); return i < 0 ? '' : 'd' + i; };
  // Blocks made clickable by script show a pointer cursor; keep the outermost one (a JS tile, a fake list item).
  const cursors = new Map(); const cursor = (el) => { if (!cursors.has(el)) cursors.set(el, getComputedStyle(el).cursor);
    return cursors.get(el); };
  const pointer = [...document.body.querySelectorAll('div,li,span,img,section,article,p,h2,h3,td')]
    .filter((el) => cursor(el) === 'pointer' && !(el.parentElement && cursor(el.parentElement) === 'pointer') &&
      !el.closest(SELECTOR));
  const found = [...new Set([...document.querySelectorAll(SELECTOR), ...pointer, ...document.querySelectorAll('select')])];
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
    if (elements.length >= 400) break;
  }
  document.querySelectorAll('[data-cib-id]').forEach((e) => e.removeAttribute('data-cib-id'));
  for (const [el, id] of marked) el.setAttribute('data-cib-id', id);
  const structured = [...document.querySelectorAll('script[type="application/ld+json"]')].map((s) => s.textContent.slice(0, 60000));
  return {url: location.href, title: document.title, elements, dialogs, structured,
    text: (document.body ? document.body.innerText : '').slice(0, maxText)};
}

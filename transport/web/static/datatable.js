// The generic data table of the dashboard's Judges and Projects tabs (judges.js,
// projects.js): sortable columns, a search box, multi-select with bulk actions, and a
// redraw only when something shown changed (docs/behaviour.md#dashboard-and-expo, "Tables
// that fit").
import { h } from './lib.js';

/**
 * DataTable renders rows with sortable columns, a search box, multi-select and bulk
 * actions. columns: {key, label, value(row), render(row)?, num?, cls? (cell class),
 * hidden()? (true leaves the column out)}.
 */
export class DataTable {
  constructor(root, { name, columns, search, actions, bulk, rowClass, extraSig }) {
    this.root = root;
    this.name = name;
    this.columns = columns;
    this.searchText = search;
    this.actions = actions;
    this.bulk = bulk;
    this.rowClass = rowClass || (() => '');
    this.extraSig = extraSig || (() => null);
    this.sig = '';
    this.rows = [];
    this.selected = new Set();
    this.sortKey = columns[0].key;
    this.sortDir = 1;
    this.query = '';
    this.limit = 300; // rows drawn at once; "Show all" lifts it
    const searchId = `${name}-search`;
    this.searchInput = h('input', {
      type: 'search', id: searchId, placeholder: name === 'judges' ? 'Name, email, code, track…' : 'Name, table, challenge…',
      oninput: () => { this.query = this.searchInput.value.toLowerCase(); this.render(); },
    });
    this.count = h('span', { class: 'hint', 'aria-live': 'polite' });
    this.bulkBar = h('div', { class: 'row' }, ...bulk.map((b) => h('button', {
      type: 'button', class: b.danger ? 'danger small' : 'small', onclick: () => b.run([...this.selected]),
      dataset: { bulk: b.label.toLowerCase().replace(/[^a-z]/g, '') },
    }, b.label)));
    this.table = h('table', { class: 'data' });
    root.replaceChildren(
      h('div', { class: 'toolbar' },
        h('div', { class: 'grow' }, h('label', { for: searchId }, `Search ${name}`), this.searchInput),
        h('div', {}, h('div', { class: 'hint' }, 'With selected:'), this.bulkBar)),
      this.count,
      h('div', { class: 'table-wrap' }, this.table),
    );
  }

  setRows(rows) {
    this.rows = rows;
    const ids = new Set(rows.map((r) => r.id));
    for (const id of [...this.selected]) if (!ids.has(id)) this.selected.delete(id);
    this.render();
  }

  visible() {
    const col = this.columns.find((c) => c.key === this.sortKey);
    let rows = this.rows;
    if (this.query) rows = rows.filter((r) => this.searchText(r).toLowerCase().includes(this.query));
    return [...rows].sort((a, b) => {
      const x = col.value(a), y = col.value(b);
      if (x < y) return -this.sortDir;
      if (x > y) return this.sortDir;
      return 0;
    });
  }

  render() {
    // Redraw only when something shown changed: a refetch with the same data must not
    // replace the row someone is about to click.
    const sig = JSON.stringify([this.rows, [...this.selected], this.sortKey, this.sortDir, this.query, this.limit, this.extraSig()]);
    if (sig === this.sig) return;
    this.sig = sig;
    const rows = this.visible();
    const allSel = rows.length > 0 && rows.every((r) => this.selected.has(r.id));
    const selAll = h('input', {
      type: 'checkbox', 'aria-label': `Select all matching ${this.name}`, checked: allSel,
      onchange: (ev) => {
        for (const r of rows) {
          if (ev.target.checked) this.selected.add(r.id); else this.selected.delete(r.id);
        }
        this.render();
      },
    });
    const cols = this.columns.filter((c) => !c.hidden || !c.hidden());
    const head = h('tr', {}, h('th', { scope: 'col' }, selAll), ...cols.map((c) => {
      const sorted = c.key === this.sortKey;
      return h('th', { scope: 'col', class: c.num ? 'num' : undefined, 'aria-sort': sorted ? (this.sortDir > 0 ? 'ascending' : 'descending') : 'none' },
        h('button', {
          type: 'button',
          onclick: () => {
            if (this.sortKey === c.key) this.sortDir = -this.sortDir; else { this.sortKey = c.key; this.sortDir = 1; }
            this.render();
          },
        }, c.label, sorted ? (this.sortDir > 0 ? ' ▲' : ' ▼') : ''));
    }), h('th', { scope: 'col' }, 'Actions'));
    const shown = rows.slice(0, this.limit);
    const body = shown.map((r) => {
      const cb = h('input', {
        type: 'checkbox', 'aria-label': `Select ${r.name}`, checked: this.selected.has(r.id),
        onchange: (ev) => {
          if (ev.target.checked) this.selected.add(r.id); else this.selected.delete(r.id);
          this.render();
        },
      });
      const cls = [this.rowClass(r), this.selected.has(r.id) ? 'selected' : ''].join(' ').trim();
      return h('tr', { class: cls || undefined, dataset: { id: r.id } },
        h('td', { 'data-label': 'Select' }, cb),
        ...cols.map((c) => h('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || undefined, 'data-label': c.label },
          c.render ? c.render(r) : String(c.value(r)))),
        h('td', { class: 'actions-cell', 'data-label': 'Actions' }, h('div', { class: 'row' }, ...this.actions(r))));
    });
    this.table.replaceChildren(h('thead', {}, head), h('tbody', {}, ...body));
    const more = rows.length > shown.length
      ? h('button', { type: 'button', class: 'small', onclick: () => { this.limit = Infinity; this.render(); } }, `Show all ${rows.length}`)
      : null;
    this.count.replaceChildren(`${rows.length} of ${this.rows.length} match · ${this.selected.size} selected `, more || '');
    for (const b of this.bulkBar.querySelectorAll('button')) b.disabled = this.selected.size === 0;
  }
}

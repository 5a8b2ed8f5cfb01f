// Floodgate console: polls the admin listener every second (rates, status, offenders; bans and
// overrides every other second once signed in) and acts through the control API. Every value
// is shown with textContent (never parsed as HTML) and cut to 64 characters.
'use strict';

(() => {
  const TOKEN_KEY = 'floodgate-console-token';
  const CUT = 64;
  const WINDOW_S = 15 * 60;
  const PAGE = 200;
  const MIN_SPAN_S = 60;
  // Allowed lines in greens and blues, throttled (dashed) in reds and oranges, one pair a policy.
  const COLORS = [
    ['#1f7a4d', '#c0392b'], ['#1f5fbf', '#d35400'], ['#16a085', '#8e2c6e'],
    ['#2c3e50', '#b7950b'], ['#7f8c8d', '#e74c3c'],
  ];

  const $ = (id) => document.getElementById(id);
  const state = {
    token: sessionStorage.getItem(TOKEN_KEY),
    actions: true,
    lost: false,
    locked: false,
    tick: 0,
    lastSecond: null,
    series: new Map(),
    offenders: new Map(),
    panel: null,
  };
  const lists = {
    ban: { path: '/v1/bans', key: 'bans', word: 'ban', tbody: 'ban-rows', more: 'bans-more', pages: 1, rows: new Map() },
    override: { path: '/v1/overrides', key: 'overrides', word: 'override', tbody: 'override-rows', more: 'overrides-more', pages: 1, rows: new Map() },
  };

  // ---- text and elements -------------------------------------------------------------------

  /** A value as shown: text, cut to `n` characters with an ellipsis. */
  function cut(value, n = CUT) {
    const chars = Array.from(value === null || value === undefined ? '' : String(value));
    return chars.length > n ? chars.slice(0, n - 1).join('') + '…' : chars.join('');
  }

  /** An element; attributes set as attributes, `text` as textContent, children appended. */
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'text') node.textContent = cut(value);
      else if (name === 'class') node.className = value;
      else if (name === 'title') node.title = String(value);
      else node.setAttribute(name, String(value));
    }
    for (const child of children) node.append(child);
    return node;
  }

  function setText(id, value, n = CUT) {
    const node = $(id);
    const text = cut(value, n);
    if (node.textContent !== text) node.textContent = text;
  }

  function clock() {
    return new Date().toLocaleTimeString();
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined) return 'never ends';
    let s = Math.max(0, Math.round(seconds));
    const parts = [];
    for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60]]) {
      if (s >= size) {
        parts.push(Math.floor(s / size) + unit);
        s %= size;
      }
    }
    if (s || !parts.length) parts.push(s + 's');
    return parts.slice(0, 2).join(' ');
  }

  // ---- messages ----------------------------------------------------------------------------

  let errorKind = null;

  function showError(message, kind = 'action') {
    const node = $('error');
    node.textContent = cut(message, 400);
    node.hidden = false;
    errorKind = kind;
  }

  function clearError(kind) {
    if (kind && errorKind !== kind) return;
    $('error').hidden = true;
    $('error').textContent = '';
    errorKind = null;
  }

  function say(message) {
    const line = $('status-line');
    line.textContent = cut(message, 200);
    line.classList.toggle('lost', state.lost);
  }

  // ---- calls -------------------------------------------------------------------------------

  class HttpError extends Error {
    constructor(status, problem, retryAfter) {
      super((problem && (problem.detail || problem.title)) || 'HTTP ' + status);
      this.status = status;
      this.problem = problem;
      this.retryAfter = retryAfter;
    }
  }

  class Offline extends Error {}

  /** A call to the admin listener with the token; JSON back, or an HttpError / Offline. */
  async function call(method, path, body, token = state.token) {
    const headers = {};
    if (token) headers.Authorization = 'Bearer ' + token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: 'no-store',
        credentials: 'omit',
      });
    } catch (e) {
      connectionLost();
      throw new Offline('the admin listener cannot be reached');
    }
    connectionBack();
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (e) {
      data = null;
    }
    if (!response.ok) throw new HttpError(response.status, data, response.headers.get('Retry-After'));
    return data;
  }

  function connectionLost() {
    if (state.lost) return;
    state.lost = true;
    const message = 'Lost the connection to the admin listener at ' + clock() + '; reconnecting every second…';
    say(message);
    showError(message, 'connection');
  }

  function connectionBack() {
    if (!state.lost) return;
    state.lost = false;
    clearError('connection');
    say('Reconnected at ' + clock() + '.');
  }

  /** What went wrong with `what`, told to the operator; a refused token signs out. */
  function failed(what, error) {
    if (error instanceof Offline) return;
    if (error instanceof HttpError && error.status === 401 && state.token) {
      signOut();
      showError('The token was refused (no longer in admin.token_file?): sign in again.');
      return;
    }
    if (error instanceof HttpError && error.status === 401) {
      state.locked = true;
      showError('These views need a token (admin.protect_metrics is on): sign in.', 'locked');
      return;
    }
    showError(what + ': ' + error.message);
  }

  // ---- sign-in -----------------------------------------------------------------------------

  async function signIn() {
    const token = $('token').value.trim();
    if (!token) {
      showError('Enter a token of admin.token_file to sign in.');
      return;
    }
    try {
      await call('GET', '/v1/bans?limit=1', undefined, token);
    } catch (error) {
      if (error instanceof Offline) return;
      const why = {
        401: 'That token was refused: it is not one of admin.token_file\'s tokens. You are not signed in.',
        403: 'The control API is off: set admin.token_file to a file of name:token lines and reload.',
        429: 'Too many wrong tokens from this address: wait ' + (error.retryAfter || 'a few') + ' s and try again.',
      }[error.status];
      showError(why || 'Sign-in failed: ' + error.message);
      return;
    }
    state.token = token;
    state.locked = false;
    sessionStorage.setItem(TOKEN_KEY, token);
    $('token').value = '';
    clearError();
    showSignedIn();
    say('Signed in at ' + clock() + '.');
    refreshLists();
  }

  function signOut() {
    state.token = null;
    sessionStorage.removeItem(TOKEN_KEY);
    for (const list of Object.values(lists)) {
      for (const row of list.rows.values()) row.remove();
      list.rows.clear();
      list.pages = 1;
    }
    showSignedIn();
  }

  function showSignedIn() {
    const signedIn = Boolean(state.token);
    $('sign-in').hidden = signedIn || !state.actions;
    $('signed-in').hidden = !signedIn;
    document.body.classList.toggle('signed-out', !signedIn);
    document.body.classList.toggle('read-only', !state.actions);
    $('read-only').hidden = state.actions;
  }

  // ---- live: rates, chart, status ----------------------------------------------------------

  async function loadRates() {
    const since = state.lastSecond === null ? '' : '?since=' + state.lastSecond;
    const data = await call('GET', '/console/api/rates' + since);
    setText('allowed-rate', String(data.current.allowed));
    setText('throttled-rate', String(data.current.throttled));
    setText('scope', data.scope === 'fleet'
      ? 'fleet-wide: ' + data.instances + ' instance(s), last second'
      : 'this instance, last second', 200);
    for (const p of data.policies) {
      let series = state.series.get(p.policy);
      if (!series) {
        series = { points: [], color: COLORS[state.series.size % COLORS.length] };
        state.series.set(p.policy, series);
      }
      p.allowed.forEach((allowed, i) => {
        series.points.push({ t: p.from + i, allowed, throttled: p.throttled[i] });
      });
      series.points = series.points.filter((point) => point.t > data.now - WINDOW_S);
    }
    state.lastSecond = data.now;
    drawChart();
  }

  function drawChart() {
    const canvas = $('chart');
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (!width || !height) return;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const end = state.lastSecond || 0;
    let top = 1;
    let oldest = end;
    for (const series of state.series.values()) {
      for (const point of series.points) top = Math.max(top, point.allowed, point.throttled);
      if (series.points.length) oldest = Math.min(oldest, series.points[0].t);
    }
    // From the oldest second held (at least a minute) up to 15 minutes.
    const span = Math.min(WINDOW_S, Math.max(MIN_SPAN_S, end - oldest));
    top = niceCeiling(top);
    const left = 44;
    const bottom = height - 18;
    const x = (t) => left + ((t - (end - span)) / span) * (width - left - 4);
    const y = (v) => bottom - (v / top) * (bottom - 6);
    g.font = '11px system-ui, sans-serif';
    g.fillStyle = '#5d6774';
    g.strokeStyle = '#dde2e8';
    g.lineWidth = 1;
    const lines = top % 4 === 0 ? 4 : 5;
    for (let i = 0; i <= lines; i++) {
      const value = (top / lines) * i;
      g.beginPath();
      g.moveTo(left, y(value));
      g.lineTo(width - 4, y(value));
      g.stroke();
      g.fillText(Number.isInteger(value) ? String(value) : value.toFixed(1), 2, y(value) + 4);
    }
    for (const part of [1, 2 / 3, 1 / 3, 0]) {
      const ago = Math.round(span * part);
      const label = ago === 0 ? 'now' : ago % 60 === 0 ? '-' + ago / 60 + 'm' : '-' + ago + 's';
      g.fillText(label, Math.min(x(end - ago), width - 24), height - 4);
    }
    for (const series of state.series.values()) {
      for (const [field, dash, color] of [['allowed', [], series.color[0]], ['throttled', [5, 3], series.color[1]]]) {
        g.strokeStyle = color;
        g.lineWidth = 1.5;
        g.setLineDash(dash);
        g.beginPath();
        series.points.forEach((point, i) => {
          const at = [x(point.t), y(point[field])];
          if (i === 0) g.moveTo(...at);
          else g.lineTo(...at);
        });
        g.stroke();
      }
    }
    g.setLineDash([]);
    drawLegend();
  }

  function niceCeiling(value) {
    const power = Math.pow(10, Math.floor(Math.log10(value)));
    for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
    return 10 * power;
  }

  function drawLegend() {
    const legend = $('legend');
    if (legend.childElementCount === state.series.size * 2) return;
    legend.replaceChildren();
    for (const [policy, series] of state.series) {
      for (const [word, dashed, color] of [['allowed', false, series.color[0]], ['throttled', true, series.color[1]]]) {
        const swatch = el('i', { class: dashed ? 'dashed' : '' });
        swatch.style.borderTopColor = color;
        legend.append(el('li', {}, swatch, cut(policy, 32) + ' ' + word));
      }
    }
  }

  async function loadStatus() {
    const data = await call('GET', '/console/api/status');
    if (state.actions !== data.actions) {
      state.actions = data.actions;
      if (!data.actions && state.token) signOut();
      showSignedIn();
    }
    const store = data.store;
    const latency = store.latency_ms === null ? 'no calls in the last second' : store.latency_ms.toFixed(2) + ' ms a call';
    setText('store-status', store.kind + ': ' + latency + '; breaker ' + (store.breaker_open ? 'OPEN' : 'closed')
      + '; ' + store.fallbacks + ' fallback decisions; ' + store.fleet_size + ' instance(s)', 200);
    const crowdsec = data.crowdsec;
    setText('crowdsec-status', crowdsec.decisions || crowdsec.last_pull_age_s
      ? crowdsec.decisions + ' decisions; last pull ' + duration(crowdsec.last_pull_age_s) + ' ago'
      : 'no decisions pulled (off, or not yet)', 200);
    setText('challenge-status', data.challenges.issued + ' issued, ' + data.challenges.passed + ' passed');
  }

  // ---- offenders ---------------------------------------------------------------------------

  async function loadOffenders() {
    const data = await call('GET', '/offenders');
    setText('offenders-window', 'last ' + duration(data.window_seconds) + ' to ' + duration(2 * data.window_seconds));
    const tbody = $('offender-rows');
    const seen = new Set();
    for (const offender of data.offenders) {
      const key = offender.caller || offender.identity;
      seen.add(key);
      let row = state.offenders.get(key);
      if (!row) {
        row = offenderRow(offender);
        state.offenders.set(key, row);
      }
      row.offender = offender;
      setCell(row, 'source', offender.source || '–');
      setCell(row, 'policy', offender.policy);
      setCell(row, 'refusals', String(offender.throttled));
      setCell(row, 'score', offender.score == null ? '–' : String(offender.score));
      setCell(row, 'last-seen', duration(offender.last_seen_s) + ' ago');
    }
    for (const [key, row] of state.offenders) {
      if (!seen.has(key) && !row.contains(state.panel)) {
        row.remove();
        state.offenders.delete(key);
      }
    }
    if (!state.panel) {
      const order = data.offenders.map((o) => state.offenders.get(o.caller || o.identity));
      if (order.some((row, i) => tbody.children[i] !== row)) tbody.append(...order);
    }
    $('offenders-empty').hidden = data.offenders.length > 0;
  }

  function setCell(row, name, value) {
    const cell = row.querySelector('[data-cell="' + name + '"]');
    const text = cut(value);
    if (cell.textContent !== text) cell.textContent = text;
  }

  function offenderRow(offender) {
    const caller = offender.caller || offender.identity;
    const actions = el('td', { class: 'actions' });
    const row = el('tr', { 'data-test': 'offender', 'data-caller': caller },
      el('td', { class: 'mono', title: caller }, cut(caller, 17)),
      el('td', { 'data-cell': 'source', class: 'mono' }),
      el('td', { 'data-cell': 'policy' }),
      el('td', { 'data-cell': 'refusals' }),
      el('td', { 'data-cell': 'score' }),
      el('td', { 'data-cell': 'last-seen' }),
      actions);
    const button = (test, label, action) => {
      const b = el('button', { type: 'button', 'data-test': test, class: 'act quiet', text: label });
      b.addEventListener('click', () => action(row));
      actions.append(b);
    };
    button('inspect', 'inspect', inspect);
    button('ban', 'ban', openBan);
    button('override', 'override', openOverride);
    button('reset', 'reset', reset);
    return row;
  }

  function needToken() {
    if (state.token) return false;
    showError(state.actions
      ? 'Sign in with a token of admin.token_file to act.'
      : 'Read-only: set admin.token_file and reload to act from here.');
    return true;
  }

  /** The offender's caller as the control API names it (its digest, under its source). */
  function named(row) {
    const o = row.offender;
    if (!o.source) throw new Error('no source named this caller (anonymous): ban its address instead');
    return { source: o.source, caller: o.caller };
  }

  function closePanel() {
    if (state.panel) state.panel.remove();
    state.panel = null;
  }

  function openPanel(row, fields, confirm, label, onConfirm) {
    if (needToken()) return;
    closePanel();
    const inputs = {};
    const panel = el('div', { class: 'panel' });
    for (const [test, placeholder] of fields) {
      inputs[test] = el('input', { 'data-test': test, placeholder, 'aria-label': test, autocomplete: 'off' });
      panel.append(inputs[test]);
    }
    const ok = el('button', { type: 'button', 'data-test': confirm, class: 'act danger', text: label });
    const cancel = el('button', { type: 'button', class: 'quiet', text: 'cancel' });
    ok.addEventListener('click', async () => {
      ok.disabled = true;
      try {
        await onConfirm(inputs);
        closePanel();
      } catch (error) {
        failed(label, error);
      } finally {
        ok.disabled = false;
      }
    });
    cancel.addEventListener('click', closePanel);
    panel.append(ok, cancel);
    row.lastElementChild.append(panel);
    state.panel = panel;
    panel.querySelector('input').focus();
  }

  function openBan(row) {
    openPanel(row, [['ban-ttl', 'ttl: 10m'], ['ban-reason', 'reason']], 'ban-confirm', 'ban', async (inputs) => {
      const body = Object.assign(named(row), {
        scope: 'caller',
        ttl: inputs['ban-ttl'].value.trim() || '10m',
        reason: inputs['ban-reason'].value.trim() || 'from the console',
      });
      const ban = await call('POST', '/v1/bans', body);
      clearError();
      say('Banned ' + cut(body.caller, 16) + ' (ban ' + ban.id + ', ' + duration(ban.expires_in) + ').');
      refreshLists();
    });
  }

  function openOverride(row) {
    const policy = row.offender.policy;
    const fields = [
      ['override-policy', 'policy: ' + policy],
      ['override-capacity', 'capacity'],
      ['override-rate', 'rate, e.g. 10/s'],
      ['override-ttl', 'ttl: 10m'],
    ];
    openPanel(row, fields, 'override-confirm', 'override', async (inputs) => {
      const capacity = inputs['override-capacity'].value.trim();
      const body = Object.assign(named(row), {
        policy: inputs['override-policy'].value.trim() || policy,
        capacity: /^\d+$/.test(capacity) ? Number(capacity) : capacity,
        rate: inputs['override-rate'].value.trim(),
        ttl: inputs['override-ttl'].value.trim() || '10m',
        reason: 'from the console',
      });
      const made = await call('POST', '/v1/overrides', body);
      clearError();
      say('Override ' + made.id + ' for ' + cut(body.caller, 16) + ' under ' + cut(body.policy, 32) + '.');
      refreshLists();
    });
  }

  async function inspect(row) {
    if (needToken()) return;
    try {
      const who = named(row);
      const query = new URLSearchParams(who).toString();
      const data = await call('GET', '/v1/callers?' + query);
      const out = $('inspect');
      out.textContent = 'caller ' + who.caller + ' (' + who.source + ')\n' + JSON.stringify(data.policies, null, 2);
      out.hidden = false;
      clearError();
    } catch (error) {
      failed('inspect', error);
    }
  }

  async function reset(row) {
    if (needToken()) return;
    try {
      const who = named(row);
      const data = await call('POST', '/v1/callers/reset', who);
      clearError();
      say('Reset ' + cut(who.caller, 16) + ' under ' + cut(data.reset.join(', '), 48) + '.');
    } catch (error) {
      failed('reset', error);
    }
  }

  // ---- bans and overrides ------------------------------------------------------------------

  async function loadList(list) {
    let after = 0;
    let next = null;
    const seen = new Set();
    for (let page = 0; page < list.pages; page++) {
      const data = await call('GET', list.path + '?after=' + after + '&limit=' + PAGE);
      for (const entry of data[list.key]) {
        seen.add(entry.id);
        let row = list.rows.get(entry.id);
        if (!row) {
          row = entryRow(list, entry);
          list.rows.set(entry.id, row);
        }
        row.endsAt = entry.expires_in === null ? null : Date.now() + entry.expires_in * 1000;
      }
      next = data.next_after;
      if (next === null || next === undefined) break;
      after = next;
    }
    for (const [id, row] of list.rows) {
      if (!seen.has(id)) {
        row.remove();
        list.rows.delete(id);
      }
    }
    const tbody = $(list.tbody);
    const order = [...list.rows.keys()].sort((a, b) => a - b).map((id) => list.rows.get(id));
    if (order.some((row, i) => tbody.children[i] !== row)) tbody.append(...order);
    $(list.more).hidden = next === null || next === undefined;
    tickTimes();
  }

  function entryRow(list, entry) {
    const unban = el('button', {
      type: 'button',
      class: 'act danger',
      'data-test': list.word === 'ban' ? 'unban' : 'delete-override',
      text: list.word === 'ban' ? 'unban' : 'delete',
    });
    const left = el('td', { 'data-cell': 'left' });
    const cells = list.word === 'ban'
      ? [
        el('td', { text: entry.id }),
        el('td', { class: 'mono', text: entry.scope === 'cidr' ? entry.value : entry.source + ' ' + entry.caller }),
        el('td', { text: entry.reason }),
        el('td', { text: entry.by }),
      ]
      : [
        el('td', { text: entry.id }),
        el('td', { text: entry.policy }),
        el('td', { class: 'mono', text: entry.source + ' ' + entry.caller }),
        el('td', { text: entry.quota ? 'quota ' + entry.quota : entry.capacity + ' at ' + entry.rate }),
        el('td', { text: entry.by }),
      ];
    const row = el('tr', { 'data-test': list.word + '-row', 'data-id': entry.id },
      ...cells, left, el('td', { class: 'actions' }, unban));
    unban.addEventListener('click', () => remove(list, entry.id, row));
    return row;
  }

  async function remove(list, id, row) {
    if (needToken()) return;
    try {
      await call('DELETE', list.path + '/' + id);
      clearError();
      say('Deleted ' + list.word + ' ' + id + ' at ' + clock() + '.');
    } catch (error) {
      if (!(error instanceof HttpError && error.status === 404)) {
        failed('delete ' + list.word + ' ' + id, error);
        return;
      }
      showError('The ' + list.word + ' ' + id + ' is gone: someone else deleted it, or it ran out.');
    }
    row.remove();
    list.rows.delete(id);
  }

  function tickTimes() {
    const now = Date.now();
    for (const list of Object.values(lists)) {
      for (const row of list.rows.values()) {
        const cell = row.querySelector('[data-cell="left"]');
        const text = row.endsAt === null ? 'never ends' : duration((row.endsAt - now) / 1000);
        if (cell.textContent !== text) cell.textContent = text;
      }
    }
  }

  async function refreshLists() {
    if (!state.token) return;
    try {
      await Promise.all(Object.values(lists).map(loadList));
    } catch (error) {
      failed('lists', error);
    }
  }

  async function create(kind) {
    if (needToken()) return;
    const value = (id) => $(id).value.trim();
    const optional = (text) => text || undefined;
    try {
      if (kind === 'ban') {
        const scope = value('new-ban-scope');
        const body = {
          scope,
          value: value('new-ban-value'),
          source: scope === 'caller' ? value('new-ban-source') : undefined,
          ttl: optional(value('new-ban-ttl')),
          reason: optional(value('new-ban-reason')),
        };
        const ban = await call('POST', '/v1/bans', body);
        say('Ban ' + ban.id + ' made at ' + clock() + '.');
      } else {
        const capacity = value('new-override-capacity');
        const body = {
          policy: value('new-override-policy'),
          source: value('new-override-source'),
          value: value('new-override-value'),
          capacity: /^\d+$/.test(capacity) ? Number(capacity) : capacity,
          rate: value('new-override-rate'),
          ttl: optional(value('new-override-ttl')),
        };
        const made = await call('POST', '/v1/overrides', body);
        say('Override ' + made.id + ' made at ' + clock() + '.');
      }
      clearError();
      refreshLists();
    } catch (error) {
      failed(kind, error);
    }
  }

  // ---- overload: the switch and each pool's load --------------------------------------------

  async function loadOverload() {
    const data = await call('GET', '/v1/overload');
    let level = data.level;
    if (data.switch) level += ' (by ' + data.switch.by + ', ' + data.switch.expires_in_s + ' s left)';
    setText('overload-level', level, 200);
    $('overload-off').hidden = data.configured;
    const rows = $('overload-rows');
    rows.replaceChildren();
    for (const pool of data.pools) {
      const row = document.createElement('tr');
      for (const cell of [pool.pool, pool.in_flight, pool.limit, pool.queued, pool.overloaded ? 'yes' : 'no']) {
        const td = document.createElement('td');
        td.textContent = String(cell);
        row.append(td);
      }
      rows.append(row);
    }
  }

  async function switchOverload(level) {
    const body = { level };
    const ttl = $('overload-ttl').value.trim();
    if (ttl && level !== 'auto') body.ttl = ttl;
    try {
      await call('PUT', '/v1/overload', body);
      clearError();
      say('Overload switch: ' + level + ' at ' + clock() + '.');
      await loadOverload();
    } catch (error) {
      failed('switching overload to ' + level, error);
    }
  }

  // ---- the loop ----------------------------------------------------------------------------

  async function poll() {
    state.tick += 1;
    const reads = state.locked && !state.token ? [] : [loadRates(), loadStatus(), loadOffenders()];
    const results = await Promise.allSettled(reads);
    const refused = results.find((r) => r.status === 'rejected');
    if (refused) failed('reading the views', refused.reason);
    else if (reads.length) clearError('locked');
    if (state.token && state.tick % 2 === 0) {
      await refreshLists();
      await loadOverload().catch((error) => failed('reading the overload state', error));
    }
    tickTimes();
    if (!state.lost && reads.length && $('status-line').textContent === 'connecting…') say('Live.');
    setTimeout(poll, 1000);
  }

  // ---- references -------------------------------------------------------------------------

  /** Explains the decision behind the reference typed in (GET /v1/decisions/{ref}). */
  async function lookUp() {
    const reference = $('lookup-ref').value.trim();
    const note = $('lookup-note');
    const result = $('lookup-result');
    result.hidden = true;
    note.hidden = true;
    const tell = (text) => {
      note.textContent = text;
      note.hidden = false;
    };
    if (!/^(fg-[0-9a-f]{32}|[0-9a-f-]{1,64})$/i.test(reference)) {
      tell('A reference is fg- and 32 hex digits, or hex digits and dashes: the ref of a refusal, or its x-request-id.');
      return;
    }
    try {
      const record = await call('GET', '/v1/decisions/' + encodeURIComponent(reference));
      result.textContent = explanation(record);
      result.hidden = false;
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) {
        tell('No instance keeps ' + reference + ': unknown, or older than decisions.max_age.');
        return;
      }
      failed('Looking up ' + reference, error);
    }
  }

  /** A decision record as the operator reads it: a summary line, then every field. */
  function explanation(record) {
    const policies = (record.policies || []).map((p) => p.policy + ': ' + p.outcome).join(', ');
    const caller = record.identity ? record.identity.source + ' ' + record.identity.digest : 'no caller named';
    const summary = [
      record.decision + ' (' + record.status + ')',
      record.method + ' ' + record.path,
      policies || 'no policy decided',
      caller,
      'on ' + record.instance + (record.found_on === 'fleet' ? ' (read from the fleet)' : ''),
    ].join(' · ');
    return summary + '\n\n' + JSON.stringify(record, null, 2);
  }

  function start() {
    $('sign-in-button').addEventListener('click', signIn);
    $('token').addEventListener('keydown', (event) => {
      if (event.key === 'Enter') signIn();
    });
    $('sign-out').addEventListener('click', () => {
      signOut();
      say('Signed out.');
    });
    $('new-ban').addEventListener('click', () => create('ban'));
    $('new-override').addEventListener('click', () => create('override'));
    for (const level of ['challenge', 'shed', 'auto']) {
      $('overload-' + level).addEventListener('click', () => switchOverload(level));
    }
    for (const list of Object.values(lists)) {
      $(list.more).addEventListener('click', () => {
        list.pages += 1;
        refreshLists();
      });
    }
    $('lookup-button').addEventListener('click', lookUp);
    $('lookup-ref').addEventListener('keydown', (event) => {
      if (event.key === 'Enter') lookUp();
    });
    window.addEventListener('resize', drawChart);
    showSignedIn();
    refreshLists();
    poll();
  }

  start();
})();

// The run explorer's one script. Everything it shows comes from the JSON data block of the page and is put into
// the page as text nodes (textContent), never as markup, so model output cannot become elements or scripts.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('data').textContent);
  var root = document.getElementById('app');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function fmt(v, digits) {
    if (v === null || v === undefined || v === '') return '—';
    if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(digits === undefined ? 1 : digits);
    return String(v);
  }
  // Links only ever point at pages this run wrote (names from the data block, checked here) plus a fragment.
  function safePage(name) { return /^[A-Za-z0-9._-]+\.html$/.test(name) ? name : '#'; }
  function link(page, id) { return safePage(page) + '#sample=' + encodeURIComponent(id); }
  function table(parent, head, rows, numeric) {
    var t = add(parent, el('table'));
    var tr = add(add(t, el('thead')), el('tr'));
    head.forEach(function (h, i) { add(tr, el('th', numeric && numeric[i] ? 'num' : '', h)); });
    var body = add(t, el('tbody'));
    rows.forEach(function (r) {
      var row = add(body, el('tr'));
      r.forEach(function (c, i) {
        var td = add(row, el('td', numeric && numeric[i] ? 'num' : ''));
        if (c instanceof Node) td.appendChild(c); else td.textContent = fmt(c, 2);
      });
    });
    return t;
  }
  function stats(parent, pairs) {
    var s = add(parent, el('div', 'stats'));
    pairs.forEach(function (p) { var d = add(s, el('div', '', p[0])); add(d, el('b', '', fmt(p[1], 2))); });
  }

  function header(title) {
    var h = add(document.body, el('header'));
    h.appendChild(el('h1', '', title));
    var nav = add(h, el('div'));
    var home = add(nav, el('a', '', 'All benchmarks and models'));
    home.href = 'index.html';
    if (D.index) {
      var a = add(nav, el('a', '', D.pair ? 'All samples of ' + D.pair[0] + ' and ' + D.pair[1] : 'All samples of ' + D.model));
      a.href = safePage(D.index);
    }
    var rep = add(nav, el('a', '', 'Report'));
    rep.href = '../report.html';
    document.body.appendChild(root);
  }

  // ---- Home: the benchmarks and models of the run.
  function home() {
    header('Run explorer: ' + D.run);
    add(root, el('p', 'note', 'One page per benchmark and model lists every sample; details are split over pages of at most ' +
      fmt(D.max_page_mb, 0) + ' MB. The pages open from disk with no server and no network.'));
    table(root, ['benchmark', 'model', 'samples', 'detail pages', 'largest page (MB)', 'all pages (MB)'],
      D.entries.map(function (e) {
        var a = el('a', '', e.model); a.href = safePage(e.index);
        return [e.bench, a, e.samples, e.pages, e.largest_mb, e.total_mb];
      }), [false, false, true, true, true, true]);
    if (D.pairs && D.pairs.length) {
      add(root, el('h2', '', 'Two models side by side'));
      add(root, el('p', 'note', 'The same IFScale sample (same N, seed and keywords) or RIFT prompt for two models: the keywords one found and the other did not, the answers one got right and the other wrong.'));
      table(root, ['benchmark', 'models', 'samples both hold', 'samples that differ', 'listed', 'detail pages', 'all pages (MB)'],
        D.pairs.map(function (e) {
          var a = el('a', '', e.a + ' and ' + e.b); a.href = safePage(e.index);
          return [e.bench, a, e.paired, e.differing, e.samples, e.pages, e.total_mb];
        }), [false, false, true, true, true, true, true]);
    }
    if (D.controls) {
      var p = add(root, el('p', 'note', 'Control items with a known verdict, sent to each judge blind, are listed apart from the results: '));
      var a = add(p, el('a', '', 'judge check')); a.href = safePage(D.controls);
    }
  }

  // ---- Controls: the judge check's items, never among the results.
  function controls() {
    header('Judge check: control items of ' + D.run);
    add(root, el('p', 'note', 'Items whose verdict is known, made from this run\'s own data and sent to each judge blind among the real items. They are in no result, table or figure.'));
    table(root, ['benchmark', 'judge', 'kind', 'form', 'question', 'expected', 'given answer or report', 'judge said', 'agrees'],
      D.rows, [false, false, false, false, false, false, false, false, false]);
  }

  // ---- Index: every sample of one benchmark and model, filterable and sortable.
  function index() {
    var bench = D.bench === 'ifscale' ? 'IFScale' : 'RIFT';
    header(D.pair ? bench + ': ' + D.pair[0] + ' and ' + D.pair[1] + ' side by side' : bench + ' samples: ' + D.model);
    if (D.note) add(root, el('p', 'note', D.note));
    var bar = add(root, el('div', 'bar'));
    var filters = [];
    D.filters.forEach(function (f) {
      var col = D.columns.indexOf(f);
      var values = [];
      D.rows.forEach(function (r) { if (values.indexOf(r[col]) < 0) values.push(r[col]); });
      values.sort(function (a, b) { return a < b ? -1 : a > b ? 1 : 0; });
      add(bar, el('label', '', f));
      var s = add(bar, el('select'));
      add(s, el('option', '', 'all')).value = '';
      values.forEach(function (v, i) { var o = add(s, el('option', '', fmt(v))); o.value = String(i); });
      filters.push({ col: col, select: s, values: values });
    });
    add(bar, el('label', '', 'id contains'));
    var search = add(bar, el('input'));
    var count = add(bar, el('span', 'note'));
    var holder = add(root, el('div'));
    var sortCol = 0, asc = true;
    var LIMIT = 2000;
    function draw() {
      var rows = D.rows.filter(function (r) {
        if (search.value && String(r[0]).indexOf(search.value) < 0) return false;
        return filters.every(function (f) { return f.select.value === '' || r[f.col] === f.values[+f.select.value]; });
      });
      rows.sort(function (a, b) {
        var x = a[sortCol], y = b[sortCol];
        if (x === null) return 1; if (y === null) return -1;
        var c = x < y ? -1 : x > y ? 1 : 0;
        return asc ? c : -c;
      });
      count.textContent = rows.length + ' of ' + D.rows.length + ' samples' + (rows.length > LIMIT ? ' (first ' + LIMIT + ' shown)' : '');
      holder.textContent = '';
      var t = table(holder, D.columns, rows.slice(0, LIMIT).map(function (r) {
        var a = el('a', '', r[0]); a.href = link(D.pages[r[r.length - 1]], r[0]);
        return [a].concat(r.slice(1, D.columns.length));
      }), D.numeric);
      var ths = t.querySelectorAll('th');
      ths.forEach(function (th, i) {
        if (i === sortCol) th.className += ' sorted' + (asc ? ' asc' : '');
        th.addEventListener('click', function () { if (sortCol === i) asc = !asc; else { sortCol = i; asc = true; } draw(); });
      });
    }
    filters.forEach(function (f) { f.select.addEventListener('change', draw); });
    search.addEventListener('input', draw);
    draw();
  }

  // ---- Detail: the samples of one page, one opened.
  function detail() {
    header((D.bench === 'ifscale' ? 'IFScale' : 'RIFT') + ': ' + (D.pair ? D.pair[0] + ' and ' + D.pair[1] + ' side by side' : D.model));
    var grid = add(root, el('div', 'grid'));
    var side = add(grid, el('div', 'side'));
    var main = add(grid, el('div'));
    if (D.prev) { var p = add(side, el('a', '', '← previous page')); p.href = safePage(D.prev); }
    var links = {};
    D.samples.forEach(function (s) {
      var a = add(side, el('a', '', s.id)); a.href = '#sample=' + encodeURIComponent(s.id); links[s.id] = a;
    });
    if (D.next) { var n = add(side, el('a', '', 'next page →')); n.href = safePage(D.next); }
    function open() {
      var m = /^#sample=(.*)$/.exec(location.hash);
      var id = m ? decodeURIComponent(m[1]) : (D.samples[0] && D.samples[0].id);
      var s = D.samples.filter(function (x) { return x.id === id; })[0] || D.samples[0];
      Object.keys(links).forEach(function (k) { links[k].className = k === s.id ? 'cur' : ''; });
      main.textContent = '';
      if (D.pair) { if (D.bench === 'ifscale') pairIfscale(main, s); else pairRift(main, s); }
      else if (D.bench === 'ifscale') ifscale(main, s); else rift(main, s);
    }
    window.addEventListener('hashchange', open);
    open();
  }

  // An IFScale report with its keyword occurrences marked.
  function report(parent, s) {
    var text = add(parent, el('div', 'text'));
    if (!s.segs) text.textContent = 'No accepted attempt: the sample failed and is scored as failed.';
    else s.segs.forEach(function (g) {
      if (g.length === 1) text.appendChild(document.createTextNode(g[0]));
      else if (g[1] === -1) add(text, el('span', 'outside', g[0]));
      else { var mk = add(text, el('mark', g[2], g[0])); mk.title = '#' + (g[1] + 1) + ' ' + (s.keywords[g[1]] || [''])[0]; }
    });
  }

  function ifscale(main, s) {
    add(main, el('h2', '', s.id + ' · N = ' + s.n + ' · seed ' + s.seed));
    stats(main, [['status', s.status], ['accuracy %', s.accuracy], ['exact', s.exact], ['modified', s.modified],
      ['omitted', s.omitted], ['attempts', s.attempts], ['coherence', s.coherence], ['visible output tokens', s.output_tokens],
      ['reasoning tokens', s.reasoning_tokens], ['latency s', s.latency_s]]);
    add(main, el('h3', '', 'Report' + (s.span === 'report' ? ' (scored between the report tags; grey text was not scored)' : '')));
    add(main, el('p', 'note', 'Green: the exact keyword. Orange: a modified form. Hover a mark for its keyword and position.'));
    report(main, s);
    if (s.reasoning) { var d = add(main, el('details')); add(d, el('summary', '', 'Reasoning (' + s.reasoning.length + ' characters)')); add(d, el('div', 'text', s.reasoning)); }
    var omitted = s.keywords.map(function (k, i) { return [i, k]; }).filter(function (x) { return x[1][1] === 'o'; });
    add(main, el('h3', '', 'Omitted keywords, in list order (' + omitted.length + ')'));
    var om = add(main, el('div', 'omitted'));
    omitted.forEach(function (x) { add(om, el('span', '', '#' + (x[0] + 1) + ' ' + x[1][0])); });
    add(main, el('h3', '', 'Keyword list'));
    var kw = add(main, el('div', 'kw'));
    var names = { e: 'exact', m: 'modified', o: 'omitted', '-': 'not scored' };
    s.keywords.forEach(function (k, i) {
      var d = add(kw, el('div', '', (i + 1) + '. ' + k[0] + ' '));
      add(d, el('span', 'st-' + k[1], names[k[1]] || k[1]));
    });
    add(main, el('h3', '', 'Attempts'));
    table(main, ['attempt', 'accepted', 'rejected because', 'judge score', 'judge reason', 'finish', 'words', 'output tokens', 'reasoning tokens', 'latency s'],
      s.history.map(function (h) {
        return [h.attempt, h.accepted ? 'yes' : 'no', h.reason, h.coherence, h.coherence_reason || h.judge_error, h.finish, h.words, h.output_tokens, h.reasoning_tokens, h.latency_s];
      }), [true, false, false, true, false, false, true, true, true, true]);
  }

  function rift(main, s) {
    add(main, el('h2', '', s.id + ' · ' + s.structure + ' · n = ' + s.n + (s.k ? ' · k = ' + s.k : '')));
    stats(main, [['outcome', s.outcome], ['accuracy % (judged)', s.accuracy], ['correct', s.correct], ['unjudged', s.unjudged],
      ['wrong question', s.wrong_question], ['flagged, judged correct', s.wrong_question_correct], ['missing', s.missing], ['extra', s.extra], ['prompt tokens', s.prompt_tokens],
      ['output tokens', s.completion_tokens], ['reasoning tokens', s.reasoning_tokens]]);
    add(main, el('h3', '', 'Traversal'));
    var rows = {};
    var t = table(main, ['step', 'question #', 'question', 'gold', 'parsed reply', 'verdict', 'verdict by', 'answer belongs to'],
      s.steps.map(function (r) {
        var v = el('span', 'v-' + r[5], r[5]);
        var wq = null;
        if (r[7] !== null) {
          // A flagged answer the judge called correct: a lenient judge, or an answer right for both questions.
          var lenient = r[5] === 'correct';
          wq = el('a', lenient ? 'wq wq-correct' : 'wq', 'question ' + r[7] + (lenient ? ' (judged correct)' : ''));
          if (lenient) wq.title = 'Also the expected answer of question ' + r[7] + ', yet judged correct: a lenient judge, or right for both';
          wq.addEventListener('click', function () {
            var row = rows[r[7]];
            if (row) { row.scrollIntoView({ block: 'center' }); row.className = 'flash'; setTimeout(function () { row.className = ''; }, 1500); }
          });
        }
        return [r[0], r[1], r[2], r[3], r[4], v, r[6], wq];
      }), [true, true, false, false, false, false, false, false]);
    t.querySelectorAll('tbody tr').forEach(function (tr, i) { rows[s.steps[i][1]] = tr; });
    add(main, el('h3', '', 'Raw reply'));
    add(main, el('div', 'text', s.content === null ? 'No reply.' : s.content));
    if (s.reasoning) { var d = add(main, el('details')); add(d, el('summary', '', 'Reasoning (' + s.reasoning.length + ' characters)')); add(d, el('div', 'text', s.reasoning)); }
  }

  // ---- Two models on the same IFScale sample: the keywords one found exactly and the other did not.
  function pairIfscale(main, s) {
    var A = D.pair[0], B = D.pair[1];
    var names = { e: 'exact', m: 'modified', o: 'omitted', '-': 'not scored' };
    add(main, el('h2', '', s.id + ' · N = ' + s.n + ' · seed ' + s.seed));
    stats(main, [[A + ' status', s.a.status], [B + ' status', s.b.status], [A + ' accuracy %', s.a.accuracy], [B + ' accuracy %', s.b.accuracy],
      ['found by ' + A + ' only', s.a_only], ['found by ' + B + ' only', s.b_only]]);
    [[A, B, 1, 2], [B, A, 2, 1]].forEach(function (w) {
      var only = s.keywords.map(function (k, i) { return [i, k]; })
        .filter(function (x) { return x[1][w[2]] === 'e' && x[1][w[3]] !== 'e' && x[1][w[3]] !== '-'; });
      add(main, el('h3', '', 'Found by ' + w[0] + ', missed by ' + w[1] + ' (' + only.length + ')'));
      var box = add(main, el('div', 'omitted'));
      only.forEach(function (x) { add(box, el('span', '', '#' + (x[0] + 1) + ' ' + x[1][0] + ' (' + w[1] + ': ' + names[x[1][w[3]]] + ')')); });
    });
    add(main, el('h3', '', 'Keyword list'));
    add(main, el('p', 'note', 'Rows where one model found the keyword exactly and the other did not are highlighted.'));
    var t = table(main, ['#', 'keyword', A, B], s.keywords.map(function (k, i) {
      return [i + 1, k[0], el('span', 'st-' + k[1], names[k[1]] || k[1]), el('span', 'st-' + k[2], names[k[2]] || k[2])];
    }), [true, false, false, false]);
    t.querySelectorAll('tbody tr').forEach(function (tr, i) {
      var k = s.keywords[i];
      if ((k[1] === 'e') !== (k[2] === 'e') && k[1] !== '-' && k[2] !== '-') tr.className = k[1] === 'e' ? 'diff-a' : 'diff-b';
    });
    add(main, el('h3', '', 'Reports'));
    var two = add(main, el('div', 'pair'));
    [[A, s.a], [B, s.b]].forEach(function (x) {
      var col = add(two, el('div'));
      add(col, el('h4', '', x[0]));
      report(col, x[1]);
    });
  }

  // ---- Two models on the same RIFT prompt: the answers one got right and the other wrong.
  function pairRift(main, s) {
    var A = D.pair[0], B = D.pair[1];
    add(main, el('h2', '', s.id + ' · ' + s.structure + ' · n = ' + s.n + (s.k ? ' · k = ' + s.k : '')));
    stats(main, [[A + ' accuracy % (judged)', s.a.accuracy], [B + ' accuracy % (judged)', s.b.accuracy],
      ['right for ' + A + ' only', s.a_only], ['right for ' + B + ' only', s.b_only],
      [A + ' outcome', s.a.outcome], [B + ' outcome', s.b.outcome]]);
    add(main, el('h3', '', 'Traversal'));
    var bar = add(main, el('div', 'bar'));
    var only = add(bar, el('input'));
    only.type = 'checkbox';
    add(bar, el('label', '', 'only the answers one model got right and the other wrong'));
    var holder = add(main, el('div'));
    function draw() {
      holder.textContent = '';
      var steps = s.steps.filter(function (r) { return !only.checked || r[8] !== ''; });
      var t = table(holder, ['step', 'question #', 'question', 'gold', A + ' reply', A + ' verdict', B + ' reply', B + ' verdict'],
        steps.map(function (r) {
          return [r[0], r[1], r[2], r[3], r[4], el('span', 'v-' + r[5], r[5]), r[6], el('span', 'v-' + r[7], r[7])];
        }), [true, true, false, false, false, false, false, false]);
      t.querySelectorAll('tbody tr').forEach(function (tr, i) {
        if (steps[i][8] === 'a') tr.className = 'diff-a'; else if (steps[i][8] === 'b') tr.className = 'diff-b';
      });
    }
    only.addEventListener('change', draw);
    draw();
    add(main, el('h3', '', 'Raw replies'));
    var two = add(main, el('div', 'pair'));
    [[A, s.a], [B, s.b]].forEach(function (x) {
      var col = add(two, el('div'));
      add(col, el('h4', '', x[0]));
      add(col, el('div', 'text', x[1].content === null ? 'No reply.' : x[1].content));
    });
  }

  if (D.kind === 'home') home(); else if (D.kind === 'index') index(); else if (D.kind === 'controls') controls(); else detail();
})();

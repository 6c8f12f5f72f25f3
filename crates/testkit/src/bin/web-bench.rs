//! Benchmark driver for bench/web.sh: measures a chat page in a real
//! browser (Debian's headless Chromium over WebDriver) from inside the
//! page, the same way for `axon web` and for a peer's page.
//!
//! The answers come from `scripted-model --clocked`: each piece of text is
//! `⟦<epoch ms>⟧ `, stamped when the model writes it. A MutationObserver
//! on `document.body` (installed before the prompt is sent) scans the text
//! of every changed node for markers it has not seen yet and records, once
//! per marker, `performance.timeOrigin + performance.now() - ms`: the time
//! from the model's byte to that text being in the page's DOM ("dom"), and
//! to the end of the frame that renders it ("painted": the main thread's
//! part of that frame done, see [`OBSERVE`]).
//! Nothing in it knows the page's structure, so a page that re-renders a
//! whole message per piece is measured the same as one that appends.
//!
//! Subcommands (each prints one JSON line on stdout; exit 1 and a message
//! on stderr on failure):
//! - `latency URL`: WARMUP turns, then TURNS turns of PIECES markers each;
//!   every marker's dom and painted latency in ms.
//! - `paint URL`: RUNS fresh browsers (new profile: nothing cached) open
//!   the page; first-contentful-paint, when the READY selector first
//!   matched (a watcher installed before the page's scripts), DOMContent
//!   Loaded, load, the bytes and requests the page took, and the addresses
//!   it asked for beyond its own origin (none reachable here).
//! - `memory URL MESSAGES`: MESSAGES/2 turns (a prompt and its answer of
//!   PIECES markers), then the JS heap after a GC (Chromium's
//!   `--enable-precise-memory-info`), the element count, the markers still
//!   in the DOM, and scrolling: 20 `scrollTop` jumps across the transcript
//!   (the time from the frame that jumps to the next one) and 180 frames of
//!   a steady scroll (each frame's interval).
//! - `connect URL BROWSERS --pid PID`: the server's VmRSS (its process and
//!   the tree under it) before any browser, with BROWSERS browsers on the
//!   page, and after each of them ran one turn.
//!
//! The page's own ways: `--ready CSS` (the page is usable; default axon's
//! `body[data-ready="1"]`), `--send CSS` (type the prompt into that field
//! and press Enter; default axon's `POST /api/op` from the page),
//! `--idle CSS` (matches when no turn runs; default axon's `#stop[hidden]`).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use axon_testkit::webdriver::Browser;
use serde_json::{Value, json};

/// Precise heap numbers, and `gc()` so the heap is read after a collection.
const FLAGS: &[&str] = &["--enable-precise-memory-info", "--js-flags=--expose-gc"];
/// How long one turn, or one page load, may take on a busy machine.
const PATIENCE: Duration = Duration::from_secs(180);

/// Finds markers in changed text; run at the start of each turn, it
/// resets the figures and marks the markers already shown as seen.
///
/// "painted": when the main thread has finished the frame that renders the
/// change (its rAF callbacks, style, layout and paint), taken by a message
/// posted for after it. A change made inside a frame's rAF callbacks (a
/// page that renders once per frame) is painted by that frame; one made by
/// a task between frames, by the next one. Which is which: our own rAF
/// loop marks "inside a frame" until a message it posts (which runs after
/// that frame's rendering), and a frame counter tells whether a frame ran
/// between the change and the message posted at the change.
const OBSERVE: &str = r#"
let st = window.__webBench;
if (!st) {
  const re = /⟦(\d+(?:\.\d+)?)⟧/g;
  st = window.__webBench = {seen: new Set(), dom: [], painted: [], count: 0, unpainted: 0,
    frames: 0, inFrame: false, live: false, running: false, queue: []};
  st.scan = (text, into) => {
    for (const m of text.matchAll(re)) {
      if (!st.seen.has(m[1])) { st.seen.add(m[1]); into.push(Number(m[1])); }
    }
  };
  const now = () => performance.timeOrigin + performance.now();
  const channel = new MessageChannel();
  channel.port1.onmessage = () => st.queue.shift()();
  const afterRendering = (fn) => { st.queue.push(fn); channel.port2.postMessage(0); };
  st.tick = () => {
    st.frames++;
    st.inFrame = true;
    afterRendering(() => { st.inFrame = false; });
    if (st.live) requestAnimationFrame(st.tick);
    else st.running = false;
  };
  new MutationObserver((records) => {
    const t = now();
    const fresh = [];
    for (const r of records) {
      if (r.type === 'characterData') st.scan(r.target.data, fresh);
      else for (const n of r.addedNodes) st.scan(n.textContent || '', fresh);
    }
    if (!fresh.length) return;
    st.count += fresh.length;
    st.unpainted += fresh.length;
    for (const ms of fresh) st.dom.push(t - ms);
    const painted = () => {
      const t = now();
      for (const ms of fresh) st.painted.push(t - ms);
      st.unpainted -= fresh.length;
    };
    const inFrame = st.inFrame, frames = st.frames;
    afterRendering(() => {
      if (inFrame || st.frames !== frames) painted();
      else requestAnimationFrame(() => afterRendering(painted));
    });
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}
st.scan(document.body.textContent, []);
st.dom = []; st.painted = []; st.count = 0;
st.live = true;
if (!st.running) { st.running = true; requestAnimationFrame(st.tick); }
return true;
"#;

/// Records when the READY selector first matches, from the document's
/// start (installed with `Page.addScriptToEvaluateOnNewDocument`).
const READY_WATCH: &str = r#"
(() => {
  const sel = __SELECTOR__;
  const obs = new MutationObserver(() => {
    if (window.__readyAt === undefined && document.querySelector(sel)) {
      window.__readyAt = performance.now();
      obs.disconnect();
    }
  });
  obs.observe(document, {subtree: true, childList: true, attributes: true});
})();
"#;

/// Types `arguments[1]` into the field `arguments[0]` as a framework sees
/// typing (the native value setter, then an `input` event) and presses
/// Enter there (`keydown`, then `keypress` unless the keydown was handled,
/// then `keyup`): in the page, without a WebDriver round trip per key.
const TYPE_AND_ENTER: &str = r#"
const [selector, text] = arguments;
const field = document.querySelector(selector);
if (!field) return false;
field.focus();
const proto = field instanceof HTMLTextAreaElement ? HTMLTextAreaElement : HTMLInputElement;
Object.getOwnPropertyDescriptor(proto.prototype, 'value').set.call(field, text);
field.dispatchEvent(new Event('input', {bubbles: true}));
const key = (type) => field.dispatchEvent(new KeyboardEvent(type,
  {key: 'Enter', code: 'Enter', keyCode: 13, charCode: type === 'keypress' ? 13 : 0, which: 13,
   bubbles: true, cancelable: true}));
// As a browser does: no keypress when the keydown was handled.
if (key('keydown')) key('keypress');
key('keyup');
return true;
"#;

/// Scrolls the page's biggest scroller: jumps, then a steady scroll.
const SCROLL: &str = r#"
const done = arguments[arguments.length - 1];
const root = document.scrollingElement;
const room = (e) => e.scrollHeight - e.clientHeight;
const scrolls = [root, ...document.querySelectorAll('*')].filter((e) => e && room(e) > 200
  && (e === root || /(auto|scroll)/.test(getComputedStyle(e).overflowY)));
const el = scrolls.sort((a, b) => room(b) - room(a))[0];
if (!el) { done({error: 'nothing on the page scrolls'}); return; }
const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
(async () => {
  const jumps = [];
  for (const f of [0, 1, .5, .25, .75, .1, .9, .33, .66, .05, .95, .4, .6, .2, .8, 0, 1, .5, .15, .85]) {
    const t0 = await frame();
    el.scrollTop = f * room(el);
    jumps.push((await frame()) - t0);
  }
  el.scrollTop = 0;
  await frame();
  let last = await frame();
  const frames = [];
  for (let i = 0; i < 180; i++) {
    el.scrollTop += 60;
    const t = await frame();
    frames.push(t - last);
    last = t;
  }
  done({jumps, frames, scroll_height: el.scrollHeight});
})();
"#;

struct Options {
    ready: String,
    send: Option<String>,
    idle: Option<String>,
    turns: usize,
    warmup: usize,
    pieces: usize,
    runs: usize,
    pid: Option<u32>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut options = Options {
        ready: r#"body[data-ready="1"]"#.into(),
        send: None,
        idle: Some("#stop[hidden]".into()),
        turns: 5,
        warmup: 1,
        pieces: 200,
        runs: 10,
        pid: None,
    };
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let Some(name) = arg.strip_prefix("--") else {
            positional.push(arg.as_str());
            continue;
        };
        let value = rest.next().map(String::as_str).unwrap_or_else(|| usage());
        let number = || value.parse::<usize>().unwrap_or_else(|_| usage());
        match name {
            "ready" => options.ready = value.into(),
            "send" => options.send = Some(value.into()),
            "idle" => options.idle = (!value.is_empty()).then(|| value.into()),
            "turns" => options.turns = number(),
            "warmup" => options.warmup = number(),
            "pieces" => options.pieces = number(),
            "runs" => options.runs = number(),
            "pid" => options.pid = Some(value.parse().unwrap_or_else(|_| usage())),
            _ => usage(),
        }
    }
    let count = |i: usize| positional.get(i).and_then(|n| n.parse::<usize>().ok());
    let result = match positional.as_slice() {
        ["latency", url] => latency(url, &options),
        ["paint", url] => paint(url, &options),
        ["memory", url, _] => memory(url, count(2).unwrap_or_else(|| usage()), &options),
        ["connect", url, _] => connect(url, count(2).unwrap_or_else(|| usage()), &options),
        _ => usage(),
    };
    match result {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("web-bench: {e}");
            std::process::exit(1);
        }
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: web-bench latency URL | paint URL | memory URL MESSAGES | connect URL BROWSERS --pid PID\n\
         \x20 [--ready CSS] [--send CSS] [--idle CSS|''] [--turns N] [--warmup N] [--pieces N] [--runs N]"
    );
    std::process::exit(2);
}

fn latency(url: &str, o: &Options) -> Result<Value, String> {
    let browser = open(url, o)?;
    let (mut dom, mut painted) = (Vec::new(), Vec::new());
    for turn in 0..o.warmup + o.turns {
        let figures = run_turn(&browser, o, &format!("turn {turn}"))?;
        if turn >= o.warmup {
            dom.extend(numbers(&figures["dom"]));
            painted.extend(numbers(&figures["painted"]));
        }
    }
    Ok(json!({"turns": o.turns, "pieces": o.pieces, "dom_ms": dom, "painted_ms": painted}))
}

fn paint(url: &str, o: &Options) -> Result<Value, String> {
    let mut runs = Vec::new();
    for _ in 0..o.runs {
        let browser = Browser::start_with_args(1280, 900, false, FLAGS)?;
        let watch = READY_WATCH.replace("__SELECTOR__", &json!(o.ready).to_string());
        browser.cdp("Page.addScriptToEvaluateOnNewDocument", json!({"source": watch}))?;
        browser.goto(url)?;
        browser.wait_for("window.__readyAt !== undefined", PATIENCE)?;
        browser.wait_for(
            "performance.getEntriesByName('first-contentful-paint').length > 0",
            PATIENCE,
        )?;
        runs.push(browser.execute(
            r#"const nav = performance.getEntriesByType('navigation')[0];
               const resources = performance.getEntriesByType('resource');
               const paint = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
               return {fcp_ms: paint('first-contentful-paint'), fp_ms: paint('first-paint'),
                 ready_ms: window.__readyAt, dcl_ms: nav.domContentLoadedEventEnd,
                 load_ms: nav.loadEventEnd, requests: 1 + resources.length,
                 transfer_bytes: resources.reduce((n, r) => n + r.transferSize, nav.transferSize),
                 decoded_bytes: resources.reduce((n, r) => n + r.decodedBodySize, nav.decodedBodySize),
                 elsewhere: resources.map((r) => r.name).filter((u) => !u.startsWith(location.origin))};"#,
            json!([]),
        )?);
    }
    Ok(json!({"runs": runs}))
}

fn memory(url: &str, messages: usize, o: &Options) -> Result<Value, String> {
    let browser = open(url, o)?;
    let turns = messages / 2;
    let started = Instant::now();
    let mut turn_ms = Vec::with_capacity(turns);
    for turn in 0..turns {
        let t = Instant::now();
        run_turn(&browser, o, &format!("message {turn} of {turns}"))?;
        turn_ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let filled_s = started.elapsed().as_secs_f64();
    let heap = browser.execute(
        r#"if (window.gc) { gc(); gc(); }
           return {heap_bytes: performance.memory.usedJSHeapSize,
             heap_total_bytes: performance.memory.totalJSHeapSize,
             elements: document.getElementsByTagName('*').length,
             markers_in_dom: [...document.body.textContent.matchAll(/⟦\d+(?:\.\d+)?⟧/g)].length};"#,
        json!([]),
    )?;
    let scroll = browser.execute_async(SCROLL)?;
    if let Some(error) = scroll.get("error") {
        return Err(format!("cannot scroll: {error}"));
    }
    let mut out = heap;
    out["turns"] = json!(turns);
    out["fill_s"] = json!(filled_s);
    out["turn_ms"] = json!(turn_ms);
    out["scroll"] = scroll;
    Ok(out)
}

fn connect(url: &str, browsers: usize, o: &Options) -> Result<Value, String> {
    let pid = o.pid.ok_or("connect needs --pid PID (the server's process)")?;
    let idle = rss(pid)?;
    let mut open_pages = Vec::new();
    for _ in 0..browsers {
        open_pages.push(open(url, o)?);
    }
    let connected = rss(pid)?;
    for (n, browser) in open_pages.iter().enumerate() {
        run_turn(browser, o, &format!("from browser {n}"))?;
    }
    let after = rss(pid)?;
    Ok(json!({"browsers": browsers, "idle": idle, "connected": connected, "after_turns": after}))
}

/// A browser on the page, once the page says it is usable.
fn open(url: &str, o: &Options) -> Result<Browser, String> {
    let browser = Browser::start_with_args(1280, 900, false, FLAGS)?;
    browser.goto(url)?;
    browser.wait_for(&format!("document.querySelector({})", json!(o.ready)), PATIENCE)?;
    Ok(browser)
}

/// Sends a prompt with the observer reset, waits for its PIECES markers
/// (and the page to be idle again) and returns the turn's figures.
fn run_turn(browser: &Browser, o: &Options, prompt: &str) -> Result<Value, String> {
    browser.execute(OBSERVE, json!([]))?;
    match &o.send {
        None => {
            let status = browser.execute(
                "return fetch('/api/op', {method: 'POST', headers: {'content-type': 'application/json'},
                   body: JSON.stringify({op: 'user_turn', text: arguments[0]})}).then((r) => r.status);",
                json!([prompt]),
            )?;
            if status != json!(202) {
                return Err(format!("POST /api/op answered {status}"));
            }
        }
        Some(field) => {
            let sent = browser.execute(TYPE_AND_ENTER, json!([field, prompt]))?;
            if sent != json!(true) {
                return Err(format!("no field {field} to type the prompt into"));
            }
        }
    }
    let condition = format!(
        "window.__webBench.count >= {} && window.__webBench.unpainted === 0 && {}",
        o.pieces,
        match &o.idle {
            Some(idle) => format!("document.querySelector({}) !== null", json!(idle)),
            None => "true".into(),
        }
    );
    wait_in_page(browser, &condition)?;
    browser.execute(
        "const st = window.__webBench; st.live = false;
         return {count: st.count, dom: st.dom, painted: st.painted};",
        json!([]),
    )
}

/// Waits for `condition` (JavaScript) checked in the page every few ms
/// (not a WebDriver round trip per check), in slices under WebDriver's
/// 30 s script timeout.
fn wait_in_page(browser: &Browser, condition: &str) -> Result<(), String> {
    let script = format!(
        "const done = arguments[arguments.length - 1]; const t0 = performance.now();
         const check = () => {{
           if ({condition}) done(true);
           else if (performance.now() - t0 > 20000) done(false);
           else setTimeout(check, 4);
         }};
         check();"
    );
    let deadline = Instant::now() + PATIENCE;
    loop {
        if browser.execute_async(&script)? == json!(true) {
            return Ok(());
        }
        if Instant::now() > deadline {
            let shown = browser
                .execute("return document.body.innerText.slice(-1500)", json!([]))
                .unwrap_or_default();
            let count =
                browser.execute("return window.__webBench.count", json!([])).unwrap_or_default();
            return Err(format!(
                "timed out waiting for `{condition}` ({count} markers seen); the page shows: {shown}"
            ));
        }
    }
}

fn numbers(value: &Value) -> Vec<f64> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_f64).collect()).unwrap_or_default()
}

/// VmRSS and VmHWM (kB) of `pid`, and VmRSS summed over it and every
/// process under it.
fn rss(pid: u32) -> Result<Value, String> {
    let field = |pid: u32, name: &str| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let own = field(pid, "VmRSS:").ok_or_else(|| format!("no process {pid} to measure"))?;
    let tree: u64 = descendants(pid).into_iter().filter_map(|p| field(p, "VmRSS:")).sum();
    Ok(json!({"rss_kb": own, "hwm_kb": field(pid, "VmHWM:"), "tree_rss_kb": own + tree}))
}

/// Every process under `pid`, from the parents in /proc/*/stat.
fn descendants(pid: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(child) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
                continue;
            };
            // The command name may hold spaces; the fields after its ")"
            // are fixed: state, then the parent's id.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, fields)| fields.split_whitespace().nth(1)?.parse::<u32>().ok());
            if let Some(parent) = parent {
                parents.push((child, parent));
            }
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let current = found[i];
        found.extend(parents.iter().filter(|(_, p)| *p == current).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

"""The tables of bench/web.sh, from the JSON lines web-bench wrote into
bench/out (web-<side>-<phase>.json, side axon or peer).

Usage: web_report.py OUT_DIR MESSAGES PEER_MESSAGES PEER_NAME PEER_NOTE
"""

import json
import os
import sys

out, messages, peer_messages, peer_name, peer_note = sys.argv[1:]
messages, peer_messages = int(messages), int(peer_messages)
names = {"axon": "axon web", "peer": peer_name}


def load(name):
    path = os.path.join(out, f"web-{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def pick(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def median(values):
    return pick(values, 0.5)


sides = [s for s in ("axon", "peer") if load(f"{s}-latency")]

print()
print("Token to page (ms from the model writing a piece to its text in the DOM; painted: to the end of the main thread's work on the frame that renders it)")
print("| page | pieces | DOM p50 | DOM p95 | DOM p99 | DOM max | painted p50 | painted p95 | painted p99 |")
print("|---|---|---|---|---|---|---|---|---|")
for s in sides:
    r = load(f"{s}-latency")
    dom, frame = r["dom_ms"], r["painted_ms"]
    print(f"| {names[s]} | {len(dom)} | {pick(dom, .5):.1f} | {pick(dom, .95):.1f} | {pick(dom, .99):.1f} | {max(dom):.1f} "
          f"| {pick(frame, .5):.1f} | {pick(frame, .95):.1f} | {pick(frame, .99):.1f} |")

print()
print("Opening the page (ms from navigation start, median of fresh browsers, worst in brackets)")
print("| page | runs | first contentful paint | usable | DOMContentLoaded | load | requests | transferred KB | decoded KB |")
print("|---|---|---|---|---|---|---|---|---|")
for s in sides:
    runs = load(f"{s}-paint")["runs"]
    col = lambda k: [r[k] for r in runs if r.get(k) is not None]  # noqa: E731
    print(f"| {names[s]} | {len(runs)} | {median(col('fcp_ms')):.0f} ({max(col('fcp_ms')):.0f}) "
          f"| {median(col('ready_ms')):.0f} ({max(col('ready_ms')):.0f}) | {median(col('dcl_ms')):.0f} "
          f"| {median(col('load_ms')):.0f} | {runs[0]['requests']} | {runs[0]['transfer_bytes'] / 1024:.0f} "
          f"| {runs[0]['decoded_bytes'] / 1024:.0f} |")

for s in sides:
    elsewhere = sorted({u for r in load(f"{s}-paint")["runs"] for u in r.get("elsewhere", [])})
    if elsewhere:
        print(f"{names[s]} also asked for (beyond its origin, not reachable here): {', '.join(elsewhere)}")

print()
print("The page after a long conversation (prompts sent through the page one after the other; heap after a GC)")
print("| page | messages | JS heap MB | elements | markers in DOM | fill s | turn ms first 20 → last 20 | jump frame p50 / max ms | steady scroll frame p50 / p99 / max ms | frames > 20 ms |")
print("|---|---|---|---|---|---|---|---|---|---|")
memory = []
for s in sides:
    for size in sorted({peer_messages, messages}):
        r = load(f"{s}-memory-{size}")
        if r is None:
            continue
        memory.append((s, size, r))
        t, sc = r["turn_ms"], r["scroll"]
        jumps, frames = sc["jumps"], sc["frames"]
        print(f"| {names[s]} | {size} | {r['heap_bytes'] / 2**20:.1f} | {r['elements']} | {r['markers_in_dom']} "
              f"| {r['fill_s']:.0f} | {median(t[:20]):.0f} → {median(t[-20:]):.0f} "
              f"| {median(jumps):.1f} / {max(jumps):.1f} | {median(frames):.1f} / {pick(frames, .99):.1f} / {max(frames):.1f} "
              f"| {sum(1 for f in frames if f > 20)} of {len(frames)} |")
for s, size, r in memory:
    if s != "peer" or size >= messages:
        continue
    # A straight line through its own turn times, summed to MESSAGES/2 turns.
    t = r["turn_ms"]
    n = len(t)
    mean_x, mean_y = (n - 1) / 2, sum(t) / n
    slope = sum((i - mean_x) * (y - mean_y) for i, y in enumerate(t)) / sum((i - mean_x) ** 2 for i in range(n))
    start = mean_y - slope * mean_x
    turns = messages // 2
    total_s = (turns * start + slope * turns * (turns - 1) / 2) / 1000
    print(f"{names[s]} at {messages} messages: not run; its turn took {start:.0f} ms + {slope:.2f} ms per earlier turn "
          f"(fit over {n} turns), so {turns} turns would take about {total_s / 60:.0f} min")

print()
print(f"Server memory (MB; VmRSS of the server process, its process tree in brackets)")
print(f"| server | idle | with the browsers | after one turn from each | peak (VmHWM) |")
print("|---|---|---|---|---|")
for s in sides:
    r = load(f"{s}-connect")
    if r is None:
        continue
    mb = lambda v: f"{v['rss_kb'] / 1024:.1f} ({v['tree_rss_kb'] / 1024:.1f})"  # noqa: E731
    print(f"| {names[s]} ({r['browsers']} browsers) | {mb(r['idle'])} | {mb(r['connected'])} | {mb(r['after_turns'])} "
          f"| {r['after_turns']['hwm_kb'] / 1024:.1f} |")

if "peer" not in sides:
    print(f"peer: {peer_note or 'skipped (PEER=0)'}")
if "axon" in sides:
    dom = load("axon-latency")["dom_ms"]
    fcp = median([r["fcp_ms"] for r in load("axon-paint")["runs"]])
    p50 = pick(dom, .5)
    print(f"targets: token to DOM p50 < 20 ms ({p50:.1f} ms, {'met' if p50 < 20 else 'MISSED'}), "
          f"first paint < 300 ms ({fcp:.0f} ms, {'met' if fcp < 300 else 'MISSED'})")

"""bench/web_fetch.sh's Python side.

`peer BASE OUT ROUNDS PAGE...`: fetches each page from the loopback server
(urllib, as a Python agent's fetch tool would) and extracts its main text as
Markdown with trafilatura, ROUNDS times; prints "PAGES SECONDS"; writes each
page's Markdown to OUT/NAME.md.

`score FIXTURES AXON_OUT PEER_OUT PAGE...`: for each page, the reference main
text is the visible text of the page's main element (REFERENCE below: the
element a reader would call the page, chosen by hand for each fixture, less
scripts, styles, navigation boxes, edit links and footnote markers), as
words. "kept" is the share of the reference's words (as a multiset) found in
a tool's output; "extra" is the share of the output's words that are not in
the reference (boilerplate that came along). Prints one row per page and
tool, then the means.
"""

import collections
import re
import sys
import time
import urllib.request

# Page → XPath of its main element.
REFERENCE = {
    "rust-book-ownership.html": "//main",
    "cargo-manifest.html": "//main",
    "rustc-lint-levels.html": "//main",
    "rustdoc-std-option.html": "//section[@id='main-content']",
    "wikipedia-elon-musk.html": "//div[@id='mw-content-text']",
}

# Inside the main element: not part of what a reader reads.
DROP = (
    ".//script",
    ".//style",
    ".//noscript",
    ".//*[contains(@class, 'navbox')]",
    ".//*[contains(@class, 'mw-editsection')]",
    ".//sup[contains(@class, 'reference')]",
    ".//*[contains(@class, 'reflist')]",
    ".//*[contains(@class, 'mw-references-wrap')]",
    ".//*[contains(@class, 'nav-chapters')]",
    ".//*[contains(@class, 'sidebar-elems')]",
)

WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Link targets and bare URLs in Markdown: addresses, not text a reader reads.
LINK_TARGET = re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+")


def words(text):
    return [w.lower() for w in WORD.findall(text)]


def peer(base, out, rounds, pages):
    import trafilatura

    fetched = 0
    started = time.perf_counter()
    for round_ in range(rounds):
        for page in pages:
            with urllib.request.urlopen(f"{base}/{page}", timeout=30) as response:
                html = response.read().decode("utf-8", "replace")
            markdown = trafilatura.extract(
                html,
                url=f"{base}/{page}",
                output_format="markdown",
                include_links=True,
                include_tables=True,
                include_formatting=True,
            ) or ""
            fetched += 1
            if round_ == 0:
                with open(f"{out}/{page[:-5]}.md", "w", encoding="utf-8") as f:
                    f.write(markdown)
    print(f"{fetched} {time.perf_counter() - started:.3f}")


def reference_words(path, xpath):
    import lxml.html

    tree = lxml.html.parse(path)
    found = tree.xpath(xpath)
    if not found:
        raise SystemExit(f"{path}: no {xpath}")
    root = found[0]
    for xpath in DROP:
        for node in root.xpath(xpath):
            node.drop_tree()
    return words(root.text_content())


def overlap(reference, output):
    ref = collections.Counter(reference)
    out = collections.Counter(output)
    common = sum((ref & out).values())
    kept = common / max(1, sum(ref.values()))
    extra = 1 - common / max(1, sum(out.values()))
    return kept, extra


def score(fixtures, axon_out, peer_out, pages):
    totals = collections.defaultdict(list)
    print(f"{'page':28} {'ref words':>9} | {'axon kept':>9} {'extra':>6} | {'trafilatura kept':>16} {'extra':>6}")
    for page in pages:
        reference = reference_words(f"{fixtures}/{page}", REFERENCE[page])
        row = [f"{page[:-5]:28} {len(reference):>9}"]
        for name, folder in (("axon", axon_out), ("trafilatura", peer_out)):
            try:
                with open(f"{folder}/{page[:-5]}.md", encoding="utf-8") as f:
                    output = words(LINK_TARGET.sub("]", f.read()))
            except FileNotFoundError:
                output = []
            kept, extra = overlap(reference, output)
            totals[name].append((kept, extra))
            width = 9 if name == "axon" else 16
            row.append(f"{kept:>{width}.1%} {extra:>6.1%}")
        print(" | ".join(row))
    means = []
    for name in ("axon", "trafilatura"):
        kept = sum(k for k, _ in totals[name]) / len(totals[name])
        extra = sum(e for _, e in totals[name]) / len(totals[name])
        means.append(f"{name}: kept {kept:.1%}, extra {extra:.1%}")
    print("mean: " + "; ".join(means))


if __name__ == "__main__":
    command, *rest = sys.argv[1:]
    if command == "peer":
        base, out, rounds, *pages = rest
        peer(base, out, int(rounds), pages)
    elif command == "score":
        fixtures, axon_out, peer_out, *pages = rest
        score(fixtures, axon_out, peer_out, pages)
    else:
        raise SystemExit(f"unknown command {command}")

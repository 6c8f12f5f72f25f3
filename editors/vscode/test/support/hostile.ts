// hostile.ts — hostile model answers, shared by the renderer's unit test
// (sanitize.test.ts) and the end-to-end test in a real VS Code: each piece
// would run script, load something remote or navigate if it were rendered
// as written. Markers: window.__pwned, alert().

// axon web's hostile answer (crates/cli/tests/it/web_browser.rs), and more.
export const HOSTILE = [
  'Look: <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script>',
  "[click me](javascript:window.__pwned=3) and ![img](javascript:window.__pwned=4)",
  '<svg onload="window.__pwned=5"></svg> <a href="javascript:window.__pwned=6">raw</a>',
  '<iframe src="javascript:window.__pwned=7"></iframe> [ok](https://example.com)',
  "![tracker](https://evil.example/pixel.png) and ![local](file:///etc/passwd)",
  "[tab](java\tscript:alert(1)) [ent](jav&#x61;script:alert(1)) [data](data:text/html;base64,PHNjcmlwdD4=) [vb](vbscript:msgbox)",
  "<a href='https://ok.example' onclick='alert(1)'>x</a> <div style='background:url(https://evil.example)'>y</div>",
  "```html\n<script>alert(1)</script><img src=x onerror=alert(2)>\n```",
  "| a | b |\n|:-:|--:|\n| <b onmouseover=alert(1)>x</b> | [y](javascript:alert(1)) |",
  "<details open ontoggle=alert(1)>z</details> <math><mi xlink:href='javascript:alert(1)'>m</mi></math>",
  "<https://evil.example/x.png> <javascript:alert(1)> <mailto:me@example.com>",
];

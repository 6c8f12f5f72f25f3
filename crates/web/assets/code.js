// code.js — syntax highlighting for fenced code blocks (highlight.js core).
//
// Guarantees: only the languages registered below are highlighted (no
// auto-detection, which is slow and often wrong); highlight.js escapes the
// code it returns, and its markup still goes through markdown.js's
// sanitizer. Any failure falls back to plain, escaped text.

import hljs from './vendor/highlight.js/core.min.js';
import bash from './vendor/highlight.js/languages/bash.min.js';
import c from './vendor/highlight.js/languages/c.min.js';
import cpp from './vendor/highlight.js/languages/cpp.min.js';
import css from './vendor/highlight.js/languages/css.min.js';
import diff from './vendor/highlight.js/languages/diff.min.js';
import dockerfile from './vendor/highlight.js/languages/dockerfile.min.js';
import go from './vendor/highlight.js/languages/go.min.js';
import ini from './vendor/highlight.js/languages/ini.min.js';
import java from './vendor/highlight.js/languages/java.min.js';
import javascript from './vendor/highlight.js/languages/javascript.min.js';
import json from './vendor/highlight.js/languages/json.min.js';
import kotlin from './vendor/highlight.js/languages/kotlin.min.js';
import makefile from './vendor/highlight.js/languages/makefile.min.js';
import markdown from './vendor/highlight.js/languages/markdown.min.js';
import php from './vendor/highlight.js/languages/php.min.js';
import plaintext from './vendor/highlight.js/languages/plaintext.min.js';
import python from './vendor/highlight.js/languages/python.min.js';
import ruby from './vendor/highlight.js/languages/ruby.min.js';
import rust from './vendor/highlight.js/languages/rust.min.js';
import shell from './vendor/highlight.js/languages/shell.min.js';
import sql from './vendor/highlight.js/languages/sql.min.js';
import swift from './vendor/highlight.js/languages/swift.min.js';
import typescript from './vendor/highlight.js/languages/typescript.min.js';
import xml from './vendor/highlight.js/languages/xml.min.js';
import yaml from './vendor/highlight.js/languages/yaml.min.js';

const LANGUAGES = {
  bash, c, cpp, css, diff, dockerfile, go, ini, java, javascript, json, kotlin,
  makefile, markdown, php, plaintext, python, ruby, rust, shell, sql, swift,
  typescript, xml, yaml,
};

for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);
hljs.configure({ ignoreUnescapedHTML: true });

/** The registered language a fence's info string names, or null. */
export function languageOf(info) {
  const word = String(info || '').trim().split(/[\s{]/)[0].toLowerCase();
  if (!word) return null;
  const lang = hljs.getLanguage(word);
  return lang ? word : null;
}

/**
 * Highlighted, escaped HTML of `code` in language `lang`, or null when the
 * language is unknown or highlighting failed (the caller escapes instead).
 */
export function highlightHtml(code, lang) {
  if (!lang) return null;
  try {
    return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}

/** The highlight.js language of a file, by its name: only languages markdown.ts registers. */
const BY_EXTENSION: Record<string, string> = {
  bash: "bash",
  c: "c",
  cc: "cpp",
  cjs: "javascript",
  cpp: "cpp",
  css: "css",
  cts: "typescript",
  cxx: "cpp",
  go: "go",
  h: "c",
  hpp: "cpp",
  htm: "xml",
  html: "xml",
  java: "java",
  js: "javascript",
  json: "json",
  jsonl: "json",
  jsx: "javascript",
  md: "markdown",
  mjs: "javascript",
  mts: "typescript",
  py: "python",
  rb: "ruby",
  rs: "rust",
  sh: "bash",
  sql: "sql",
  svg: "xml",
  ts: "typescript",
  tsx: "typescript",
  xml: "xml",
  yaml: "yaml",
  yml: "yaml",
  zsh: "bash",
};

const BY_NAME: Record<string, string> = {
  dockerfile: "dockerfile",
  makefile: "bash",
  ".bashrc": "bash",
  ".zshrc": "bash",
};

/** The language to highlight a file with, or undefined (then it is shown plain). */
export function languageOf(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const name = (path.split(/[\\/]/).pop() ?? "").toLowerCase();
  if (BY_NAME[name]) return BY_NAME[name];
  const dot = name.lastIndexOf(".");
  return dot > 0 || (dot === 0 && name.length > 1) ? BY_EXTENSION[name.slice(dot + 1)] : undefined;
}

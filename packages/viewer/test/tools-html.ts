/**
 * Reads tool-block HTML as a browser would (parse5, the WHATWG parsing algorithm) for the tests:
 * the elements and attributes a block may hold, and its text. A block that lets session text
 * become markup fails {@link unsafeParts}.
 */
import { type DefaultTreeAdapterMap, parseFragment } from "parse5";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

/** The only elements a tool block writes. */
const TAGS = new Set(["div", "span", "code", "pre", "details", "summary", "ul", "li", "p", "img"]);
/** The only attributes, and what their values may be. */
const ATTRIBUTES: Record<string, RegExp> = {
  class: /^[a-z0-9 _-]*$/,
  title: /^/,
  alt: /^/,
  "data-tool": /^/,
  "aria-hidden": /^true$/,
  src: /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$/,
};

/** Every element of a fragment, depth first. */
export function elements(html: string): Element[] {
  const out: Element[] = [];
  const walk = (node: Node) => {
    if ("tagName" in node) out.push(node);
    const children = "childNodes" in node ? node.childNodes : [];
    for (const child of children) walk(child);
    if ("content" in node && node.content) walk(node.content as Node);
  };
  walk(parseFragment(html) as unknown as Node);
  return out;
}

/** What in the HTML is not a tool block's own markup: unknown elements, attributes, or values. */
export function unsafeParts(html: string): string[] {
  const problems: string[] = [];
  for (const el of elements(html)) {
    if (!TAGS.has(el.tagName)) problems.push(`<${el.tagName}>`);
    for (const { name, value } of el.attrs) {
      const allowed = ATTRIBUTES[name];
      if (!allowed?.test(value)) problems.push(`<${el.tagName} ${name}="${value.slice(0, 60)}">`);
    }
  }
  return problems;
}

/** The text of a fragment, as the reader sees it (entities decoded). */
export function textOf(html: string): string {
  return elementText(parseFragment(html) as unknown as Node);
}

/** Elements with a class, as `tag.class` selectors match them. */
export function byClass(html: string, cls: string): Element[] {
  return elements(html).filter((el) => el.attrs.some((a) => a.name === "class" && a.value.split(" ").includes(cls)));
}

/** The text inside one element (or fragment). */
export function elementText(el: Node): string {
  let out = "";
  const walk = (node: Node) => {
    if (node.nodeName === "#text") out += (node as DefaultTreeAdapterMap["textNode"]).value;
    for (const child of "childNodes" in node ? node.childNodes : []) walk(child);
  };
  walk(el);
  return out;
}

import { SHA256_HEX } from "../ids.js";
import { Context, ShareAfterQuery, SharePageQuery, TreeFindQuery, TreeMatches } from "../schemas.js";
import { bytes, html, json, jsonl, link, linkErrors, markdown, type RouteSpec } from "./common.js";

/** The share page a link opens, and what it reads. */
export const SHARE_PAGE_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/s/assets/style.css",
    summary: "The share page's style sheet",
    auth: "none",
    responses: { 200: { description: "CSS", content: { type: "text/css" } } },
  },
  {
    method: "get",
    path: "/s/assets/app.js",
    summary: "The share page's script",
    auth: "none",
    responses: { 200: { description: "JavaScript", content: { type: "text/javascript" } } },
  },
  {
    method: "get",
    path: "/s/:token",
    summary: "A shared conversation's page (?leaf= another branch of a whole share, ?before= earlier entries)",
    auth: "link",
    params: link,
    query: SharePageQuery,
    responses: { 200: { description: "the page", content: html }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/state",
    summary:
      "The shared conversation's tip and size, for a live page (ETag); a whole share's header counts too (facts)",
    auth: "link",
    params: link,
    query: ShareAfterQuery,
    responses: { 200: { description: "the state" }, 304: { description: "unchanged" }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/entries",
    summary: "A window of a branch (?before=, ?from=) or the entries after ?after= (live), rendered",
    auth: "link",
    params: link,
    query: SharePageQuery,
    responses: { 200: { description: "rendered entries", content: html }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/tree",
    summary: "The compact tree of a whole share (parallel arrays, masked), for the page's navigator",
    auth: "link",
    params: link,
    query: SharePageQuery,
    responses: { 200: { description: "ids, parents, kinds, previews, labels, times, leaf" }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/raw",
    summary: "The shared JSONL (masked unless the share says not)",
    auth: "link",
    params: link,
    responses: { 200: { description: "the JSONL", content: jsonl }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/blobs/:hash",
    summary:
      "An image the shared session names, kept as a blob (oh-my-pi's blob:sha256:): no other blob of its owner, raster types only",
    auth: "link",
    params: { ...link, hash: SHA256_HEX },
    responses: { 200: { description: "the image (PNG, JPEG, GIF or WebP)", content: bytes }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/context",
    summary: "The shared conversation's context as JSON",
    auth: "link",
    params: link,
    query: SharePageQuery,
    responses: { 200: { description: "the context", content: json(Context) }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/md",
    summary:
      "The shared branch as Markdown (?leaf= another branch of a whole share), masked like the page; the page answers the same to Accept: text/markdown",
    auth: "link",
    params: link,
    query: SharePageQuery,
    responses: { 200: { description: "the Markdown", content: markdown }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/find",
    summary: "The tree's search over the whole text of every entry (masked), a page of matches at a time",
    auth: "link",
    params: link,
    query: TreeFindQuery,
    responses: { 200: { description: "positions in the tree", content: json(TreeMatches) }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/preview.png",
    summary: "The link's preview image (1200×630: title, model, turns, cost, the start of the conversation), masked",
    auth: "link",
    params: link,
    responses: {
      200: { description: "the image; a revoked or expired link's says so", content: { type: "image/png" } },
      404: linkErrors[404],
    },
  },
];

/** A short OpenAPI description of API v1, served at /openapi.json. README.md has the prose. */
import { SESSION_ID } from "@pisync/core";

const bearer = [{ bearer: [] }];
const id = { name: "id", in: "path", required: true, schema: { type: "string", pattern: SESSION_ID.source } };
const offset = { name: "Upload-Offset", in: "header", schema: { type: "integer", minimum: 0 } };

export const openApiDocument = {
  openapi: "3.1.0",
  info: { title: "pisync API", version: "1" },
  components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
  paths: {
    "/healthz": { get: { summary: "Liveness (no token)", responses: { 200: { description: "ok" } } } },
    "/v1/sessions": {
      get: {
        summary: "My sessions, newest first (limit ≤ 100, cursor)",
        security: bearer,
        responses: { 200: { description: "sessions and cursor" } },
      },
    },
    "/v1/sessions/{id}": {
      parameters: [id],
      head: {
        summary: "Committed length (Upload-Offset) and generation (ETag)",
        security: bearer,
        responses: { 200: { description: "" }, 404: { description: "unknown" } },
      },
      get: { summary: "Metadata", security: bearer, responses: { 200: { description: "" } } },
      patch: {
        summary:
          "Append complete lines at Upload-Offset (retry-safe; If-Match: generation; Content-Encoding: gzip; Pisync-Upload: upload id)",
        security: bearer,
        parameters: [{ ...offset, required: true }],
        responses: {
          200: { description: "appended or a retry" },
          409: { description: "offset conflict" },
          412: { description: "generation mismatch" },
          413: { description: "too large" },
          503: { description: "the session kept changing under this append: retry after Retry-After" },
        },
      },
      put: {
        summary: "Start a new generation with these lines",
        security: bearer,
        responses: {
          200: { description: "" },
          503: { description: "the session kept changing under this append: retry after Retry-After" },
        },
      },
      delete: {
        summary: "Delete every object and item of the session, and revoke its share links",
        security: bearer,
        responses: { 204: { description: "" } },
      },
    },
    "/v1/sessions/{id}/uploads": {
      parameters: [id],
      post: {
        summary: "A URL to PUT one large line (up to 64 MiB) to, then PATCH with Pisync-Upload",
        security: bearer,
        responses: { 201: { description: "" } },
      },
    },
    "/v1/sessions/{id}/raw": {
      parameters: [id],
      get: {
        summary: "Exact bytes (?generation=, Range, gzip)",
        security: bearer,
        responses: { 200: { description: "" }, 206: { description: "" } },
      },
    },
    "/v1/sessions/{id}/tree": {
      parameters: [id],
      get: {
        summary: "Entries: id, parentId, type, role, timestamp, label, preview",
        security: bearer,
        responses: { 200: { description: "" } },
      },
    },
    "/v1/sessions/{id}/context": {
      parameters: [id],
      get: {
        summary: "pi's context for ?leaf= (default leaf without)",
        security: bearer,
        responses: { 200: { description: "" } },
      },
    },
    "/v1/sessions/{id}/generations": {
      parameters: [id],
      get: { summary: "Generations, oldest first", security: bearer, responses: { 200: { description: "" } } },
    },
    "/v1/search": {
      get: {
        summary: "Search my sessions",
        description:
          'Words, "exact phrases", -exclude, prefix*, and filters cwd:, role:user|assistant|tool, since:7d, before:2026-01-01, model:, label:. Sessions ranked by their best entry (BM25), newest first on ties, each with up to 3 entries and their snippets (parts, `hit` marks a match).',
        security: bearer,
        parameters: [
          { name: "q", in: "query", required: true, schema: { type: "string", maxLength: 1000 } },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 20 } },
          { name: "cursor", in: "query", schema: { type: "string" } },
        ],
        responses: {
          200: {
            description:
              "{ sessions: [{ sessionId, name?, cwd?, entries: [{ entryId, kind, time, snippet }] }], cursor? }",
          },
          400: { description: '{ error, code: "bad_query" }: what is wrong with the query' },
        },
      },
    },
    "/v1/tokens": {
      get: { summary: "My tokens", security: bearer, responses: { 200: { description: "" } } },
      post: { summary: "A new token for me", security: bearer, responses: { 201: { description: "" } } },
    },
    "/v1/tokens/{id}": {
      delete: { summary: "Revoke a token", security: bearer, responses: { 204: { description: "" } } },
    },
  },
};

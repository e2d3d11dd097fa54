/**
 * The OpenAPI 3.1 document served at /openapi.json, generated from `@pisync/protocol`'s
 * `ROUTES` (paths, parameters, bodies and answers; JSON schemas from the zod contract).
 * README.md has the prose.
 */
import { type Content, ERROR_CODES, type RouteSpec } from "@pisync/protocol";
import { ROUTES } from "@pisync/protocol/routes";
import * as z from "zod/mini";

type Json = Record<string, unknown>;

/** A zod schema as JSON Schema (the part OpenAPI 3.1 takes: no `$schema`). */
function schemaOf(schema: z.ZodMiniType, io: "input" | "output"): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Json;
  return rest;
}

function contentOf(content: Content, io: "input" | "output"): Json {
  if ("json" in content) return { "application/json": { schema: schemaOf(content.json, io) } };
  if ("form" in content) return { "application/x-www-form-urlencoded": { schema: schemaOf(content.form, io) } };
  return { [content.type]: {} };
}

/** `/v1/sessions/:id` → `/v1/sessions/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, "{$1}");
}

function parametersOf(route: RouteSpec): Json[] {
  const names = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
  const path = names.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: route.params?.[name] ? { type: "string", pattern: route.params[name].source } : { type: "string" },
  }));
  const query = route.query ? (schemaOf(route.query, "input") as { properties?: Json; required?: string[] }) : {};
  const queries = Object.entries(query.properties ?? {}).map(([name, schema]) => ({
    name,
    in: "query",
    required: query.required?.includes(name) ?? false,
    schema,
  }));
  const headers = (route.headers ?? []).map((h) => ({
    name: h.name,
    in: "header",
    required: h.required ?? false,
    description: h.description,
    schema: { type: "string" },
  }));
  return [...path, ...queries, ...headers];
}

/** Who may call a route, as OpenAPI security requirements (any one of them). */
const SECURITY: Record<RouteSpec["auth"], Json[]> = {
  bearer: [{ bearer: [] }],
  library: [{ browserSession: [] }, { bearer: [] }],
  link: [],
  none: [],
};

function operationOf(route: RouteSpec): Json {
  const responses: Json = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const codes = response.codes?.length ? ` (code: ${response.codes.join(", ")})` : "";
    responses[status] = {
      description: `${response.description}${codes}`,
      ...(response.content ? { content: contentOf(response.content, "output") } : {}),
    };
  }
  const parameters = parametersOf(route);
  return {
    summary: route.summary,
    security: SECURITY[route.auth],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body ? { requestBody: { required: true, content: contentOf(route.body, "input") } } : {}),
    responses,
  };
}

/** The document for `routes` (default: every route of the contract). */
export function buildOpenApiDocument(routes: readonly RouteSpec[] = ROUTES) {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method] = operationOf(route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "pisync API",
      version: "1",
      description: `Every error answer is { error, code }. Codes: ${Object.entries(ERROR_CODES)
        .map(([code, meaning]) => `${code}: ${meaning}`)
        .join("; ")}.`,
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        browserSession: {
          type: "apiKey",
          in: "cookie",
          name: "pisync_session",
          description: "set by GET /login/:secret; POST/PUT/PATCH/DELETE also need this origin and the CSRF token",
        },
      },
    },
    paths,
  };
}

/** The document served at /openapi.json. */
export const openApiDocument = buildOpenApiDocument();

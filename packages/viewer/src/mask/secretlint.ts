/**
 * secretlint's recommended rules, run directly on a text (no secretlint core: it is async,
 * heavy to import, and honours `secretlint-disable` comments, which session content must
 * never be able to use). Each rule's documented scanner API is driven with a minimal context
 * that collects what it reports.
 */
import { rules as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import type { SecretLintRuleContext, SecretLintSourceCode } from "@secretlint/types";
import { narrowAccountId } from "./account-ids.js";
import type { Finding } from "./finding.js";
import { Keywords } from "./keywords.js";

/** secretlint rule ids (without their package prefix) → the ids masks are labelled with. */
const RULE_IDS: Record<string, string> = {
  aws: "aws-secret-access-key",
  gcp: "gcp-service-account",
  privatekey: "private-key",
  npm: "npm-token",
  basicauth: "url-password",
  slack: "slack-token",
  sendgrid: "sendgrid-api-key",
  shopify: "shopify-token",
  github: "github-token",
  openai: "openai-api-key",
  anthropic: "anthropic-api-key",
  linear: "linear-api-key",
  "1password": "1password-token",
  "database-connection-string": "database-password",
};

/**
 * Message ids that name another kind than their rule does; `null`: left to pisync's own rule
 * (secretlint reports an AWS secret key's span from the start of its name, 40 characters long,
 * so the end of the key would show).
 */
const MESSAGE_IDS: Record<string, string | null> = {
  AWSSecretAccessKey: null,
  AWSAccessKeyID: "aws-access-key-id",
  AWSAccountID: "aws-account-id",
  IncomingWebhook: "slack-webhook",
  PackageJSON_xOauthToken: "github-token",
  Npmrc_authToken: "npm-token",
};

/**
 * Strings one of which a text must hold for a rule to find anything in it (each rule's
 * patterns start with or contain one): a rule runs only on texts that hold one.
 */
const KEYWORDS: Record<string, string[]> = {
  aws: ["A3T", "AKIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ASIA", "ecret", "ECRET", "ccount", "CCOUNT"],
  privatekey: ["PRIVATE KEY"],
  npm: ["npm_", "_authToken"],
  basicauth: ["://"],
  slack: ["xox", "xapp", "hooks.slack.com"],
  sendgrid: ["SG."],
  shopify: ["shp"],
  github: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "x-oauth-basic"],
  openai: ["sk-"],
  anthropic: ["sk-ant-"],
  linear: ["lin_api_"],
  "1password": ["ops_"],
  "database-connection-string": ["mongodb", "mysql", "postgres", "MONGODB", "MYSQL", "POSTGRES"],
};

/** Options per rule: AWS access key ids are scanned too (secretlint leaves them off by default). */
const OPTIONS: Record<string, object> = { aws: { enableIDScanRule: true } };

let report: (finding: Finding) => void = () => {};

/** The GCP rule reads `.json` and `.p12` files only, never text. */
const GCP = "@secretlint/secretlint-rule-gcp";

/** The rule that obeys `secretlint-disable` comments: session content must not turn masking off. */
const DIRECTIVES = "@secretlint/secretlint-rule-filter-comments";

/** Every rule but the comment filter (and the GCP one). */
const creators = recommended.filter((creator) => creator.meta.id !== DIRECTIVES && creator.meta.id !== GCP);
const shortId = (creator: (typeof creators)[number]) => creator.meta.id.replace(/^@secretlint\/secretlint-rule-/, "");

/** The keywords of each scanner, in order (one pass finds them with the other rules' keywords). */
export const SECRETLINT_KEYWORDS: readonly (readonly string[])[] = creators.map(
  // A rule not listed here (a newer preset's) runs on every text.
  (creator) => KEYWORDS[shortId(creator)] ?? [""],
);

type Scan = (source: SecretLintSourceCode) => unknown;

/** The scanners, made on first use (importing the masker stays cheap). */
let scanners: Scan[] | undefined;
function scannersOf(): Scan[] {
  scanners ??= creators.map((creator) => {
    const short = shortId(creator);
    const id = RULE_IDS[short] ?? short;
    const context: SecretLintRuleContext = {
      sharedOptions: {},
      createTranslator: () => ((messageId: string) => ({ message: messageId, messageId, data: undefined })) as never,
      report: (descriptor) => {
        const [start, end] = descriptor.range;
        const rule = MESSAGE_IDS[descriptor.message.messageId];
        if (rule !== null) report({ start, end, rule: rule ?? id });
      },
      ignore: () => {},
    };
    const handler = creator.create(context, (OPTIONS[short] ?? {}) as never);
    return (source: SecretLintSourceCode) => handler.file?.(source);
  });
  return scanners;
}

let keywords: Keywords | undefined;
const keywordIndex = () => {
  keywords ??= new Keywords(SECRETLINT_KEYWORDS);
  return keywords;
};

/** Source objects as the rules read them: plain text, no file (no rule touches the disk). */
function sourceOf(content: string): SecretLintSourceCode {
  return {
    hasBOM: false,
    content,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: "text",
    ext: ".txt",
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
  } as unknown as SecretLintSourceCode;
}

/**
 * What secretlint's recommended rules find in `text`, synchronously; `present` says which
 * scanners' keywords the text holds (found here when not given).
 */
export function secretlintFindings(text: string, present = keywordIndex().present(text)): Finding[] {
  const found: Finding[] = [];
  report = (finding) => found.push(finding);
  try {
    const source = sourceOf(text);
    for (const [i, scan] of scannersOf().entries()) {
      if (!present[i]) continue;
      const result = scan(source);
      // Scanners of text are synchronous; one that is not would scan files (p12), never text.
      if (result instanceof Promise) result.catch(() => {});
    }
  } finally {
    report = () => {};
  }
  return found.map((f) => narrowAccountId(text, f));
}

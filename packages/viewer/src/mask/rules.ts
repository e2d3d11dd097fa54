/**
 * The rules pisync adds to secretlint's recommended set: the shapes of gitleaks' default rules
 * that set lacks (or misses in decoded text), each written to run in linear time: a literal
 * prefix or a word boundary to start at, bounded repetitions of classes that cannot overlap
 * what follows them, no nested quantifiers.
 */
import type { Finding } from "./finding.js";
import { Keywords } from "./keywords.js";
import { settingFindings } from "./settings.js";

export interface Rule {
  /** The id a mask is labelled with (`[masked: <id>]`). */
  id: string;
  /** Strings one of which must occur in a text for the rule to run (a cheap prefilter). */
  keywords: readonly string[];
  /** Global pattern; when it has a group named `secret`, only that group is masked. */
  pattern: RegExp;
  /** A last check of a match (placeholders, code rather than a value); `name` is the setting's name. */
  accept?: (secret: string) => boolean;
}

/** Not preceded by a token character: a token starts here, never in the middle of another. */
const START = `(?<![A-Za-z0-9_-])`;
/** Not followed by a token character. */
const END = `(?![A-Za-z0-9_-])`;

/** Private key material in any escaping: real newlines, `\n`, `\\n`… between its lines. */
const PRIVATE_KEY_BODY = String.raw`(?:[A-Za-z0-9+/=\s\\:,.]|-(?!-{4})){0,16384}`;

export const RULES: readonly Rule[] = [
  {
    id: "private-key",
    keywords: ["PRIVATE KEY"],
    pattern: new RegExp(
      `-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----${PRIVATE_KEY_BODY}(?:-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----)?`,
      "g",
    ),
  },
  {
    id: "aws-access-key-id",
    keywords: ["A3T", "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA"],
    pattern:
      /(?<![A-Za-z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
  },
  {
    // The 40-character secret, named as AWS names it (env, credentials file, JSON, code).
    id: "aws-secret-access-key",
    keywords: ["ecret", "ECRET"],
    pattern:
      /(?:aws)?_?secret_?(?:access)?_?key(?:_?id)?["']?\s{0,8}(?::|=>|=|\s)\s{0,8}["']?(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])/gi,
  },
  {
    id: "gcp-api-key",
    keywords: ["AIza"],
    pattern: new RegExp(`${START}AIza[0-9A-Za-z_-]{35}${END}`, "g"),
  },
  {
    id: "gcp-oauth-token",
    keywords: ["ya29."],
    pattern: new RegExp(String.raw`${START}ya29\.[0-9A-Za-z_-]{20,2048}`, "g"),
  },
  {
    id: "azure-ad-client-secret",
    keywords: ["Q~"],
    pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g,
  },
  {
    id: "azure-storage-key",
    keywords: ["AccountKey=", "SharedAccessKey="],
    pattern: /(?:AccountKey|SharedAccessKey)=(?<secret>[A-Za-z0-9+/=]{20,128})/g,
  },
  {
    id: "github-token",
    keywords: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    pattern: new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9_]{36,255}|github_pat_[A-Za-z0-9_]{22,255})`, "g"),
  },
  {
    id: "gitlab-token",
    keywords: [
      "glpat-",
      "glptt-",
      "gldt-",
      "glrt-",
      "glsoat-",
      "glcbt-",
      "glimt-",
      "glft-",
      "gloas-",
      "glagent-",
      "glffct-",
      "GR1348941",
    ],
    pattern: new RegExp(
      `${START}(?:gl(?:pat|ptt|dt|rt|soat|cbt|imt|ft|oas|agent|ffct)-[0-9A-Za-z_-]{20,64}|GR1348941[0-9A-Za-z_-]{20,64})`,
      "g",
    ),
  },
  {
    id: "npm-token",
    keywords: ["npm_"],
    pattern: new RegExp(`${START}npm_[A-Za-z0-9]{36}${END}`, "g"),
  },
  {
    id: "pypi-token",
    keywords: ["pypi-"],
    pattern: new RegExp(`${START}pypi-AgE[A-Za-z0-9_-]{50,512}`, "g"),
  },
  {
    id: "openai-api-key",
    keywords: ["sk-"],
    pattern: new RegExp(
      `${START}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,200}T3BlbkFJ[A-Za-z0-9_-]{20,200}`,
      "g",
    ),
  },
  {
    // API keys, admin keys (`sk-ant-admin01-`) and OAuth tokens of Anthropic.
    id: "anthropic-api-key",
    keywords: ["sk-ant-"],
    pattern: new RegExp(String.raw`${START}sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{32,128}`, "g"),
  },
  {
    id: "openrouter-api-key",
    keywords: ["sk-or-"],
    pattern: new RegExp(String.raw`${START}sk-or-v\d-[a-f0-9]{64}${END}`, "g"),
  },
  {
    id: "huggingface-token",
    keywords: ["hf_", "api_org_"],
    pattern: new RegExp(`${START}(?:hf_|api_org_)[A-Za-z0-9]{34}${END}`, "g"),
  },
  {
    id: "groq-api-key",
    keywords: ["gsk_"],
    pattern: new RegExp(`${START}gsk_[A-Za-z0-9]{48,56}${END}`, "g"),
  },
  {
    id: "xai-api-key",
    keywords: ["xai-"],
    pattern: new RegExp(`${START}xai-[A-Za-z0-9]{70,90}${END}`, "g"),
  },
  {
    id: "stripe-key",
    keywords: ["_live_", "_test_", "_prod_"],
    pattern: new RegExp(`${START}(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,255}${END}`, "g"),
  },
  {
    id: "slack-token",
    keywords: ["xox", "xapp-"],
    pattern: new RegExp(`${START}(?:xox[abeoprs]|xapp)-[0-9A-Za-z-]{10,255}`, "g"),
  },
  {
    id: "slack-webhook",
    keywords: ["hooks.slack.com"],
    pattern: /hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/_-]{20,200}/g,
  },
  {
    id: "discord-webhook",
    keywords: ["/api/webhooks/"],
    pattern: /discord(?:app)?\.com\/api\/webhooks\/\d{5,30}\/[A-Za-z0-9_-]{30,100}/g,
  },
  {
    id: "telegram-bot-token",
    keywords: [":AA"],
    pattern: /(?<![0-9])\d{8,10}:AA[0-9A-Za-z_-]{32,33}(?![0-9A-Za-z_-])/g,
  },
  {
    id: "sendgrid-api-key",
    keywords: ["SG."],
    pattern: new RegExp(String.raw`${START}SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}${END}`, "g"),
  },
  {
    id: "twilio-api-key",
    keywords: ["SK"],
    pattern: /(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])/g,
  },
  {
    id: "mailchimp-api-key",
    keywords: ["-us"],
    pattern: /(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])/g,
  },
  {
    id: "digitalocean-token",
    keywords: ["dop_v1_", "doo_v1_", "dor_v1_"],
    pattern: new RegExp(`${START}do[opr]_v1_[a-f0-9]{64}${END}`, "g"),
  },
  {
    id: "databricks-token",
    keywords: ["dapi"],
    pattern: /(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])/g,
  },
  {
    id: "docker-hub-token",
    keywords: ["dckr_"],
    pattern: new RegExp(`${START}dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,64}`, "g"),
  },
  {
    id: "hashicorp-token",
    keywords: ["hvs.", "hvb.", ".atlasv1."],
    pattern: new RegExp(
      String.raw`${START}(?:hv[sb]\.[A-Za-z0-9_-]{24,512}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})`,
      "g",
    ),
  },
  {
    id: "supabase-token",
    keywords: ["sbp_", "sb_secret_"],
    pattern: new RegExp(`${START}(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{20,64})`, "g"),
  },
  {
    id: "grafana-token",
    keywords: ["glc_", "glsa_"],
    pattern: new RegExp(`${START}(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})`, "g"),
  },
  {
    id: "postman-api-key",
    keywords: ["PMAK-"],
    pattern: new RegExp(`${START}PMAK-[a-f0-9]{24}-[a-f0-9]{34}${END}`, "g"),
  },
  {
    id: "newrelic-key",
    keywords: ["NRAK-", "NRJS-"],
    pattern: new RegExp(`${START}NR(?:AK|JS)-[A-Z0-9]{19,27}${END}`, "g"),
  },
  {
    id: "age-secret-key",
    keywords: ["AGE-SECRET-KEY-1"],
    pattern: /AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/g,
  },
  {
    // Three base64url parts, the first two JSON objects (`{"` encodes as `eyJ`).
    id: "jwt",
    keywords: ["eyJ"],
    pattern: new RegExp(
      String.raw`${START}eyJ[A-Za-z0-9_-]{8,8192}\.eyJ[A-Za-z0-9_-]{8,65536}\.[A-Za-z0-9_-]{0,8192}`,
      "g",
    ),
  },
  {
    // HTTP credentials as a client sends them (`curl -H "Authorization: Bearer …"`): the token itself.
    id: "authorization-header",
    keywords: ["Bearer", "bearer", "BEARER", "Basic", "basic", "BASIC"],
    pattern:
      /(?:(?<![A-Za-z0-9_-])[Bb]earer|BEARER|[Aa]uthorization["']?\s{0,4}:\s{0,4}["']?(?:Basic|basic|BASIC))\s{1,4}(?<secret>[A-Za-z0-9_\-.~+/]{12,2048}={0,2})(?![A-Za-z0-9_\-.~+/=])/g,
    accept: (secret) => /[0-9]/.test(secret) && /[A-Za-z]/.test(secret),
  },
  {
    // scheme://user:password@host: the password (and the user before it) is masked.
    id: "url-password",
    keywords: ["://"],
    pattern:
      /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/(?<secret>[^\s:/@?#"'`<>]{0,256}:[^\s/@?#"'`<>]{1,256})@/g,
    accept: (secret) => !/^[^:]*:(?:\$\{?[A-Za-z_]|\*+$|<)/.test(secret),
  },
];

/** The rules' keywords, found together (made on first use: importing the masker stays cheap). */
let keywords: Keywords | undefined;
const keywordIndex = () => {
  keywords ??= new Keywords(RULES.map((r) => r.keywords));
  return keywords;
};

/**
 * What the rules find in `text` (with the settings named as secrets when given all rules);
 * `present` says which rules' keywords the text holds (found here when not given).
 */
export function ruleFindings(
  text: string,
  rules: readonly Rule[] = RULES,
  present = rules === RULES ? keywordIndex().present(text) : rules.map(() => true),
): Finding[] {
  const found: Finding[] = [];
  rules.forEach((rule, i) => {
    if (!present[i]) return;
    const pattern = rule.pattern;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const secret = match.groups?.secret;
      if (rule.accept && !rule.accept(secret ?? match[0])) {
        pattern.lastIndex = match.index + 1;
        continue;
      }
      const start = secret === undefined ? match.index : match.index + match[0].lastIndexOf(secret);
      const length = secret === undefined ? match[0].length : secret.length;
      if (length > 0) found.push({ start, end: start + length, rule: rule.id });
      if (match[0].length === 0) pattern.lastIndex++;
    }
  });
  // After the specific rules: where both find the same span, the specific name is kept.
  if (rules === RULES) found.push(...settingFindings(text));
  return found;
}

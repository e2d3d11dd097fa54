/**
 * The AWS SDK clients' default credential chain as the Lambda bundle has it: the environment
 * only. On Lambda the role's credentials are in the environment (`AWS_ACCESS_KEY_ID`, …), so the
 * full Node chain (`@aws-sdk/credential-provider-node`: profiles, SSO, IMDS and the clients they
 * need) would only cost cold-start time, about a fifth of the bundle's import. The bundle
 * (`infra/lib/bundling.ts`) puts this module in its place; elsewhere the SDK's chain stays.
 */
import { fromEnv } from "@aws-sdk/credential-provider-env";

/** `@aws-sdk/credential-provider-node`'s `defaultProvider`, reading the environment only. */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);

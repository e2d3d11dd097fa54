/** The CDK app: `npx cdk synth` (offline) and `npx cdk deploy`. */
import { App, Tags, Validations } from "aws-cdk-lib";
import { AwsSolutionsChecks } from "cdk-nag";
import { acknowledgeNagFindings } from "../lib/nag.js";
import { PisyncStack } from "../lib/pisync-stack.js";

const app = new App();
const stack = new PisyncStack(app, "Pisync", {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Tags.of(stack).add("project", "pisync");
acknowledgeNagFindings(stack);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

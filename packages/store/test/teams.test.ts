/** The teams contract on both stores: the embedded one and DynamoDB Local. */
import { describeOnEveryStore } from "@pisync/testing";
import { describeTeamContract } from "./contract-teams.js";

describeOnEveryStore("teams", (pair, name) => {
  describeTeamContract(name, async () => {
    const { teams } = pair().stores;
    if (!teams) throw new Error(`the ${name} stores have no teams`);
    return teams;
  });
});

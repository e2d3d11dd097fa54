import { testAwsStores } from "./aws-clients.js";
import { describeStoreContract } from "./contract.js";

describeStoreContract("AWS (S3 on s3rver + DynamoDB Local)", testAwsStores);

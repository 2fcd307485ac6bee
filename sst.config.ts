import type { SSTConfig } from "sst";
import { Api } from "./stacks/Api.js";
import { Storage } from "./stacks/Storage.js";

export default {
  config() {
    return { name: "shotline", region: process.env.AWS_REGION ?? "us-east-1" };
  },
  stacks(app) {
    app.stack(Storage).stack(Api);
  },
} satisfies SSTConfig;

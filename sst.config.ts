import type { SSTConfig } from "sst";
import { Api } from "./stacks/Api.js";
import { Cdn } from "./stacks/Cdn.js";
import { Layers } from "./stacks/Layers.js";
import { Monitoring } from "./stacks/Monitoring.js";
import { Storage } from "./stacks/Storage.js";

export default {
  config() {
    return { name: "shotline", region: process.env.AWS_REGION ?? "us-east-1" };
  },
  stacks(app) {
    app.stack(Storage).stack(Layers).stack(Api).stack(Cdn).stack(Monitoring);
  },
} satisfies SSTConfig;

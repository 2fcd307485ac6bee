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
  // Layers is async (the fonts build decodes WOFF2 with the reference decoder): awaited before the stacks that use it.
  async stacks(app) {
    app.stack(Storage);
    await app.stack(Layers);
    app.stack(Api).stack(Cdn).stack(Monitoring);
  },
} satisfies SSTConfig;

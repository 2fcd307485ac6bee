import { S3Client } from "@aws-sdk/client-s3";
import { config } from "../config.js";

// One S3 client per container. Locally it talks to s3rver, which needs path-style addressing and
// checksums only when required (otherwise uploads are stored with aws-chunked framing: corrupt).
// Pure: a bundle that imports this module and sends nothing drops the client.
export const s3 = /* @__PURE__ */ new S3Client({
  region: config.AWS_REGION,
  ...(config.S3_ENDPOINT
    ? {
        endpoint: config.S3_ENDPOINT,
        forcePathStyle: true,
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
      }
    : {}),
});

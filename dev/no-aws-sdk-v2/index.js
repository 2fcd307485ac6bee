// See package.json: the AWS SDK v2 is not installed in this project; use the v3 clients (@aws-sdk/*).
throw new Error("aws-sdk (v2) is not installed in this project (dev/no-aws-sdk-v2): use the @aws-sdk v3 clients");

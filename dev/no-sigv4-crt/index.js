// See package.json: SigV4a signing (aws-crt) is not installed in this project.
throw new Error("@aws-sdk/signature-v4-crt is not installed in this project (dev/no-sigv4-crt): SigV4a is not supported");
